// A seller's better-auth backend with Polar's plugin (`@polar-sh/better-auth`, pinned in
// package.json beside this file, on its peer `@polar-sh/sdk` 0.47, which validates every
// answer with zod) set up for usage billing against Tollgate:
//
//   polar({ client, createCustomerOnSignUp: true, use: [usage()] })
//
// and driven as the seller's front end drives it, through better-auth's own request handler:
// a user signs up (the plugin creates the Tollgate customer whose external id is the user's
// id), then sends usage through `POST /api/auth/usage/ingest` (the plugin calls
// `events.ingest` with the user's id as `external_customer_id`), then reads its meters
// through `GET /api/auth/usage/meters/list` (the plugin opens a customer session for the
// user's external id and lists `GET /v1/customer-portal/meters/` with it). An answer of
// Tollgate that does not validate is the plugin's 500; every answer is reported as it came.
// For tests/api/better_auth_usage.rs.
//
// Usage: node usage.mjs --server URL --token T --events "NAME:TOKENS,NAME:TOKENS,…"
// Prints one JSON object: {user_id, sign_up, ingests: [{status, body}], meters: {status,
// body}, errors: [the plugin's logged errors]}. Exits 0 when it could report, 1 otherwise.

import { polar, usage } from "@polar-sh/better-auth";
import { Polar } from "@polar-sh/sdk";
import { betterAuth } from "better-auth";

function argument(name) {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0 || at + 1 >= process.argv.length) {
    console.error(`missing --${name}`);
    process.exit(2);
  }
  return process.argv[at + 1];
}

const server = argument("server");
const token = argument("token");
const events = argument("events")
  .split(",")
  .filter((e) => e)
  .map((e) => {
    const [name, tokens] = e.split(":");
    return { name, tokens: Number(tokens) };
  });

// Whatever the plugin logs (its failures say why: "Polar meters list failed. Error: …").
const errors = [];
const origin = "http://127.0.0.1:3000";
const client = new Polar({ accessToken: token, serverURL: server });
const auth = betterAuth({
  secret: "tollgate-better-auth-test-secret-0123456789",
  baseURL: origin,
  emailAndPassword: { enabled: true },
  logger: {
    level: "error",
    log: (level, message, ...args) => {
      errors.push(`${level}: ${message} ${args.map((a) => String(a)).join(" ")}`.trim());
    },
  },
  plugins: [polar({ client, createCustomerOnSignUp: true, use: [usage()] })],
});

let cookie = "";
async function call(method, path, body) {
  const headers = { origin };
  if (cookie) headers.cookie = cookie;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await auth.handler(
    new Request(`${origin}/api/auth${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const setCookies = response.headers.getSetCookie();
  if (setCookies.length) {
    cookie = setCookies.map((c) => c.split(";")[0]).join("; ");
  }
  const text = await response.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed };
}

const report = { user_id: null, sign_up: null, ingests: [], meters: null, errors };
try {
  const signUp = await call("POST", "/sign-up/email", {
    email: "ada@example.com",
    password: "correct horse battery staple",
    name: "Ada Lovelace",
  });
  report.sign_up = { status: signUp.status, body: signUp.body };
  report.user_id = signUp.body?.user?.id ?? null;
  if (signUp.status === 200) {
    for (const e of events) {
      report.ingests.push(
        await call("POST", "/usage/ingest", {
          event: e.name,
          metadata: { tokens: e.tokens, endpoint: "/v1/chat", streamed: true },
        }),
      );
    }
    report.meters = await call("GET", "/usage/meters/list?page=1&limit=10");
  }
} catch (e) {
  errors.push(`the driver: ${e?.stack ?? e}`);
}
console.log(JSON.stringify(report));
process.exit(report.sign_up ? 0 : 1);
