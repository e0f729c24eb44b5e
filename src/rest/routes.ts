import { integer, type Route } from "./route.js";

const USER = "id createdAt updatedAt firstName lastName phoneNumber email clientId";
const CLIENT = "id email name createdAt";

/** The /v1 REST surface: every documented path, mapped onto the GraphQL schema. */
export const routes: Route[] = [
  // ------------------------------------------------------------ client auth (no credentials needed)
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

  // ------------------------------------------------------------ API keys
  {
    method: "POST",
    path: "/v1/api-keys",
    operation: `mutation { createApiKey { id key prefix createdAt } }`,
    result: (data) => data.createApiKey,
  },
  {
    method: "GET",
    path: "/v1/api-keys",
    operation: `query { apiKeys { id prefix createdAt lastUsedAt revokedAt } }`,
    result: (data) => data.apiKeys,
  },
  {
    method: "DELETE",
    path: "/v1/api-keys/:keyId",
    operation: `mutation ($id: ID!) { revokeApiKey(id: $id) { id prefix createdAt lastUsedAt revokedAt } }`,
    variables: ({ params }) => ({ id: params.keyId }),
    result: (data) => ({ success: true, apiKey: data.revokeApiKey }),
    errors: { NOT_FOUND: { field: "message" } },
  },

  // ------------------------------------------------------------ users
  {
    method: "POST",
    path: "/v1/user",
    operation: `mutation ($input: CreateUserInput!) { createUser(input: $input) { ${USER} } }`,
    variables: ({ body }) => ({
      input: { email: body.email, firstName: body.firstName, lastName: body.lastName, phoneNumber: body.phoneNumber, dob: body.dob },
    }),
    result: (data) => data.createUser,
    status: 201,
  },
  {
    method: "GET",
    path: "/v1/user",
    operation: `query ($page: Int, $limit: Int) { users(page: $page, limit: $limit) { ${USER} } }`,
    variables: ({ query }) => ({ page: integer(query.page), limit: integer(query.limit) }),
    result: (data) => data.users,
  },
  {
    method: "GET",
    path: "/v1/user/:userId",
    operation: `query ($id: ID!) { user(id: $id) { ${USER} } }`,
    variables: ({ params }) => ({ id: params.userId }),
    result: (data) => data.user,
  },
];
