// The benchmark's baseline: plain node:http + pg doing the same user lookup on the same database,
// with no framework, auth or GraphQL. Started by bench/run.ts as its own process.
import { createServer } from "node:http";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const server = createServer(async (req, res) => {
  const id = req.url?.split("/").pop() ?? "";
  try {
    const { rows } = await pool.query(
      `SELECT "id", "createdAt", "updatedAt", "firstName", "lastName", "phoneNumber", "email", "clientId" FROM "users" WHERE "id" = $1`,
      [id],
    );
    res.writeHead(rows.length ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(rows[0] ?? { error: "User not found" }));
  } catch {
    res.writeHead(500).end();
  }
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}` })}\n`);
});
process.on("SIGTERM", () => server.close(() => pool.end().then(() => process.exit(0))));
