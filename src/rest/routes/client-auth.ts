import type { Route } from "../route.js";

const CLIENT = "id email name createdAt";

/** OTP sign-in and sessions: the only paths that need no credentials (otp, verify). */
export const clientAuthRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/client-auth/otp",
    operation: `mutation ($email: String!, $name: String) { requestOtp(email: $email, name: $name) { message expiresAt } }`,
    variables: ({ body }) => ({ email: body.email, name: body.name }),
    result: (data) => data.requestOtp,
  },
  {
    method: "POST",
    path: "/v1/client-auth/verify",
    operation: `mutation ($email: String!, $otp: String!) { verifyOtp(email: $email, otp: $otp) { token expiresAt client { ${CLIENT} } } }`,
    variables: ({ body }) => ({ email: body.email, otp: body.otp }),
    result: (data) => data.verifyOtp,
  },
  {
    method: "GET",
    path: "/v1/client-auth/status",
    operation: `query { authStatus { authenticated client { ${CLIENT} } expiresAt } }`,
    result: (data) => data.authStatus,
  },
  {
    method: "POST",
    path: "/v1/client-auth/logout",
    operation: `mutation { logout { success } }`,
    result: (data) => data.logout,
  },
];
