// electron-updater 6.8.10 (pinned in package-lock.json) reading Tollgate's generic feed
// headless, without Electron (issue 50 research §7): an AppImageUpdater (latest-linux.yml)
// and an NsisUpdater told it runs on Windows (latest.yml), the license key sent with
// addAuthHeader. Each checks for an update from CURRENT_VERSION, expects EXPECT_VERSION,
// downloads it (electron-updater verifies the feed's sha512) and compares the bytes with
// the SHA-512 the test computed itself. Without the key the check fails.
//
// Environment: FEED_URL (the channel's base URL, ending in /), LICENSE_KEY,
// CURRENT_VERSION, EXPECT_VERSION, EXPECT_SHA512_LINUX, EXPECT_SHA512_WINDOWS (base64).
// Prints one line per check and `N passed, M failed` last.

"use strict";
const crypto = require("crypto");
const fs = require("fs");
const http = require("http");
const https = require("https");
const os = require("os");
const path = require("path");
const { HttpExecutor, configureRequestUrl, configureRequestOptions } = require("builder-util-runtime");
const { AppImageUpdater, NsisUpdater } = require("electron-updater");

class NodeExecutor extends HttpExecutor {
  createRequest(options, callback) {
    const proto = options.protocol === "https:" ? https : http;
    return proto.request(options, callback);
  }
  async download(url, destination, options) {
    return await options.cancellationToken.createPromise((resolve, reject, onCancel) => {
      const requestOptions = { headers: options.headers || undefined };
      configureRequestUrl(url, requestOptions);
      configureRequestOptions(requestOptions);
      this.doDownload(
        requestOptions,
        {
          destination,
          options,
          onCancel,
          callback: (e) => (e == null ? resolve(destination) : reject(e)),
          responseHandler: null,
        },
        0,
      );
    });
  }
}

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok - ${name}`);
  } else {
    failed++;
    console.log(`FAILED - ${name}${detail === undefined ? "" : `: ${detail}`}`);
  }
}

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

function updater(Kind, key, platform) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-updater-"));
  const cfg = path.join(dir, "app-update.yml");
  fs.writeFileSync(
    cfg,
    `provider: generic\nurl: ${JSON.stringify(env("FEED_URL"))}\nupdaterCacheDirName: tollgate-test-updater\n`,
  );
  const app = {
    version: env("CURRENT_VERSION"),
    name: "TollgateTestApp",
    isPackaged: true,
    appUpdateConfigPath: cfg,
    userDataPath: dir,
    baseCachePath: dir,
    whenReady: () => Promise.resolve(),
    relaunch() {},
    quit() {},
    onQuit() {},
  };
  const u = new Kind(null, app);
  u.httpExecutor = new NodeExecutor();
  u.autoDownload = false;
  u.autoInstallOnAppQuit = false;
  u.logger = null;
  if (platform) u._testOnlyOptions = { platform };
  if (key) u.addAuthHeader(`Bearer ${key}`);
  return { u, dir };
}

function sha512(file) {
  return crypto.createHash("sha512").update(fs.readFileSync(file)).digest("base64");
}

async function run(label, Kind, platform, expectedSha) {
  const { u, dir } = updater(Kind, env("LICENSE_KEY"), platform);
  try {
    const r = await u.checkForUpdates();
    const expect = env("EXPECT_VERSION");
    check(`${label}: an update is found`, r != null && r.isUpdateAvailable === true, JSON.stringify(r && r.updateInfo));
    check(`${label}: the newest allowed version, ${expect}`, r && r.updateInfo.version === expect, r && r.updateInfo.version);
    check(`${label}: release notes read`, r && r.updateInfo.releaseNotes === `Notes of ${expect}`, r && r.updateInfo.releaseNotes);
    const files = await u.downloadUpdate();
    check(`${label}: downloaded (sha512 verified by electron-updater)`, Array.isArray(files) && files.length >= 1, JSON.stringify(files));
    const got = files && files[0] ? sha512(files[0]) : null;
    check(`${label}: the bytes are the release's file`, got === expectedSha, `${got} != ${expectedSha}`);
  } catch (e) {
    check(`${label}: check and download`, false, e && e.stack);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  // Without the key, the feed refuses (401): the check fails.
  const bare = updater(Kind, null, platform);
  try {
    await bare.u.checkForUpdates();
    check(`${label}: refused without a key`, false, "the check succeeded");
  } catch (e) {
    check(`${label}: refused without a key`, /401/.test(String(e && e.message)), e && e.message);
  } finally {
    fs.rmSync(bare.dir, { recursive: true, force: true });
  }
}

(async () => {
  process.env.APPIMAGE = process.env.APPIMAGE || "/tmp/TollgateTestApp.AppImage";
  await run("AppImage (latest-linux.yml)", AppImageUpdater, null, env("EXPECT_SHA512_LINUX"));
  await run("NSIS (latest.yml)", NsisUpdater, "win32", env("EXPECT_SHA512_WINDOWS"));
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
})().catch((e) => {
  console.log(`FAILED - the script: ${e && e.stack}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
