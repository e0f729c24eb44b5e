import { z } from "zod";
import { OtpRequest, OtpVerification } from "../../auth/service.js";
import { doc } from "../docs.js";
import type { Route } from "../route.js";

const CLIENT = "id email name createdAt";
const Client = z.object({ id: doc.id, email: z.string(), name: z.string().nullable(), createdAt: doc.timestamp });

/** OTP sign-in and sessions: the only paths that need no credentials (otp, verify). */
export const clientAuthRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/client-auth/otp",
    operation: `mutation ($email: String!, $name: String) { requestOtp(email: $email, name: $name) { message expiresAt } }`,
    variables: ({ body }) => ({ email: body.email, name: body.name }),
    result: (data) => data.requestOtp,
    docs: {
      summary: "Mail a 6-digit sign-in code",
      description: "Every well-formed address gets the same answer. With SMTP_URL unset the mail is written to the server log.",
      auth: "public",
      body: OtpRequest,
      response: z.object({ message: z.string(), expiresAt: doc.timestamp }),
    },
  },
  {
    method: "POST",
    path: "/v1/client-auth/verify",
    operation: `mutation ($email: String!, $otp: String!) { verifyOtp(email: $email, otp: $otp) { token expiresAt client { ${CLIENT} } } }`,
    variables: ({ body }) => ({ email: body.email, otp: body.otp }),
    result: (data) => data.verifyOtp,
    docs: {
      summary: "Exchange the code for a 1-hour session JWT",
      description: "The first verify of an address signs the client up. Send the token as `x-client-auth`.",
      auth: "public",
      body: OtpVerification,
      errors: ["UNAUTHENTICATED"],
      response: z.object({ token: z.string(), expiresAt: doc.timestamp, client: Client }),
    },
  },
  {
    method: "GET",
    path: "/v1/client-auth/status",
    operation: `query { authStatus { authenticated client { ${CLIENT} } expiresAt } }`,
    result: (data) => data.authStatus,
    docs: {
      summary: "The session behind the x-client-auth token",
      auth: "session",
      response: z.object({ authenticated: z.boolean(), client: Client, expiresAt: doc.timestamp }),
    },
  },
  {
    method: "POST",
    path: "/v1/client-auth/logout",
    operation: `mutation { logout { success } }`,
    result: (data) => data.logout,
    docs: { summary: "Revoke the session token on every instance", auth: "session", response: z.object({ success: z.boolean() }) },
  },
];
