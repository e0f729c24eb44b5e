/** The currencies a virtual account can be opened in (kept apart from the service, which the GraphQL schema must not load first). */
export const VIRTUAL_ACCOUNT_CURRENCIES = ["NGN", "USD", "EUR", "MXN", "BRL"] as const;
export type VirtualAccountCurrency = (typeof VIRTUAL_ACCOUNT_CURRENCIES)[number];
