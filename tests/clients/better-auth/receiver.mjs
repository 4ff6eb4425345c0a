// A better-auth server whose only plugin is Polar's (`@polar-sh/better-auth`, pinned in
// package.json beside this file, with its peers `better-auth` and `@polar-sh/sdk` 0.47), set
// up as a seller's backend sets it up to receive Polar's webhooks:
//
//   polar({ client, use: [webhooks({ secret, onCustomerStateChanged, onPayload })] })
//
// served by better-auth's own Node adapter at `/api/auth/polar/webhooks`. The plugin checks
// each delivery's signature and parses its body with the SDK's `validateEvent` (a failure is
// its 400), then calls the handlers. For tests/api/better_auth.rs.
//
// Usage: node receiver.mjs --secret S --log FILE [--max-seconds T]
// Prints `PORT <n>` once it listens; exits after T seconds (or when killed). Appends one
// JSON line per request (`{"kind":"http","status":…,"webhook_id":…}`) and one per handler
// call (`{"kind":"onPayload"|"onCustomerStateChanged","type":…,"data":…}`, the data as the
// SDK parsed it).

import fs from "node:fs";
import http from "node:http";

import { polar, webhooks } from "@polar-sh/better-auth";
import { Polar } from "@polar-sh/sdk";
import { betterAuth } from "better-auth";
import { toNodeHandler } from "better-auth/node";

function argument(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0 || at + 1 >= process.argv.length) {
    if (fallback === undefined) {
      console.error(`missing --${name}`);
      process.exit(2);
    }
    return fallback;
  }
  return process.argv[at + 1];
}

const secret = argument("secret");
const log = argument("log");
const maxSeconds = Number(argument("max-seconds", "300"));

const append = (entry) => fs.appendFileSync(log, `${JSON.stringify(entry)}\n`);

// The plugin wants a client; the webhook handler never calls it (nothing listens there).
const client = new Polar({ accessToken: "unused", serverURL: "http://127.0.0.1:9" });

const auth = betterAuth({
  secret: "tollgate-better-auth-test-secret-0123456789",
  baseURL: "http://127.0.0.1",
  logger: { disabled: false, level: "error" },
  plugins: [
    polar({
      client,
      createCustomerOnSignUp: false,
      use: [
        webhooks({
          secret,
          onPayload: async (payload) => {
            append({ kind: "onPayload", type: payload.type });
          },
          onCustomerStateChanged: async (payload) => {
            append({
              kind: "onCustomerStateChanged",
              type: payload.type,
              timestamp: payload.timestamp,
              data: payload.data,
            });
          },
        }),
      ],
    }),
  ],
});

const handler = toNodeHandler(auth);
const server = http.createServer((req, res) => {
  res.on("finish", () => {
    append({
      kind: "http",
      method: req.method,
      path: req.url,
      status: res.statusCode,
      webhook_id: req.headers["webhook-id"] ?? null,
    });
  });
  handler(req, res);
});

server.listen(0, "127.0.0.1", () => {
  console.log(`PORT ${server.address().port}`);
});

setTimeout(() => process.exit(3), maxSeconds * 1000).unref();
