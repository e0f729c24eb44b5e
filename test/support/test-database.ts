/** The database the tests run on: PostgreSQL when TEST_DATABASE_URL/DATABASE_URL is set, else embedded. */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || undefined;
