import postgres from 'postgres';
const sql = postgres(`postgres://postgres:postgres@127.0.0.1:${process.argv[2]}/bench`, { max: 1 });
console.log(await sql`SELECT count(*)::int n, count(DISTINCT source_id)::int s FROM kb_chunks`);
await sql.end();
