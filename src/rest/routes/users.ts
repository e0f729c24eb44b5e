import { integer, type Route } from "../route.js";

/** The contract's user record, in its order (also the `data.object` of user events). */
export const USER_KEYS = ["id", "createdAt", "updatedAt", "firstName", "lastName", "phoneNumber", "email", "clientId"] as const;
const USER = USER_KEYS.join(" ");

export const userRoutes: Route[] = [
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
