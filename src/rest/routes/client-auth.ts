import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { OtpRequest, OtpVerification } from "../../auth/service.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { route } from "../route.js";

const ClientFields = graphql(`fragment ClientFields on Client { id email name createdAt }`);
const Client = named("Client", z.object({ id: doc.id, email: z.string(), name: z.string().nullable(), createdAt: doc.timestamp }));
const SESSION_TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI2YTFmMGMzZSJ9.c2lnbmF0dXJl";

/** OTP sign-in and sessions: the only paths that need no credentials (otp, verify). */
export const clientAuthRoutes = [
  route({
    method: "POST",
    path: "/v1/client-auth/otp",
    operation: graphql(`mutation RequestOtp($email: String!, $name: String) { requestOtp(email: $email, name: $name) { message expiresAt } }`),
    variables: ({ body }) => ({ email: body.email, name: body.name }),
    result: (data) => data.requestOtp,
    docs: {
      summary: "Mail a 6-digit sign-in code",
      description: "Every well-formed address gets the same answer. With SMTP_URL unset the mail is written to the server log.",
      auth: "public",
      body: named("OtpRequest", OtpRequest),
      response: z.object({ message: z.string(), expiresAt: doc.timestamp }),
      example: { body: { email: examples.client.email, name: "Acme" }, response: { message: "If the address is valid, a code is on its way", expiresAt: examples.later } },
    },
  }),
  route({
    method: "POST",
    path: "/v1/client-auth/verify",
    operation: graphql(`mutation VerifyOtp($email: String!, $otp: String!) { verifyOtp(email: $email, otp: $otp) { token expiresAt client { ...ClientFields } } }`, [ClientFields]),
    variables: ({ body }) => ({ email: body.email, otp: body.otp }),
    result: (data) => data.verifyOtp,
    docs: {
      summary: "Exchange the code for a 1-hour session JWT",
      description: "The first verify of an address signs the client up. Send the token as `x-client-auth`.",
      auth: "public",
      body: named("OtpVerification", OtpVerification),
      errors: ["UNAUTHENTICATED"],
      response: z.object({ token: z.string(), expiresAt: doc.timestamp, client: Client }),
      example: { body: { email: examples.client.email, otp: "123456" }, response: { token: SESSION_TOKEN, expiresAt: examples.later, client: examples.client } },
    },
  }),
  route({
    method: "GET",
    path: "/v1/client-auth/status",
    operation: graphql(`query GetAuthStatus { authStatus { authenticated client { ...ClientFields } expiresAt } }`, [ClientFields]),
    result: (data) => data.authStatus,
    docs: {
      summary: "The session behind the x-client-auth token",
      auth: "session",
      response: z.object({ authenticated: z.boolean(), client: Client, expiresAt: doc.timestamp }),
      example: { response: { authenticated: true, client: examples.client, expiresAt: examples.later } },
    },
  }),
  route({
    method: "POST",
    path: "/v1/client-auth/logout",
    operation: graphql(`mutation Logout { logout { success } }`),
    result: (data) => data.logout,
    docs: { summary: "Revoke the session token on every instance", auth: "session", response: z.object({ success: z.boolean() }), example: { response: { success: true } } },
  }),
];
