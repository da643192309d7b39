// A loopback reverse proxy that adds one Authorization header to every request, so a client that
// cannot send credentials (the conformance suite) can test an endpoint that requires them.
//
//   node scripts/bearer-proxy.mjs UPSTREAM-ORIGIN
//
// The token comes from the environment (BEARER_TOKEN), never from the command line, so it does
// not show in process lists. The proxy listens on a free 127.0.0.1 port and prints
// "listening http://127.0.0.1:PORT" once ready. Everything else passes through unchanged: the
// method, the path, the body, every header (Host included, so DNS-rebinding checks still see the
// client's Host), the status and the response stream (server-sent events included).
import http from "node:http";

const upstream = new URL(process.argv[2] ?? "");
const token = process.env.BEARER_TOKEN;
if (upstream.protocol !== "http:" || upstream.hostname !== "127.0.0.1" || !token) {
  console.error("usage: BEARER_TOKEN=… node bearer-proxy.mjs http://127.0.0.1:PORT");
  process.exit(2);
}

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const out = http.request(
    {
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    },
  );
  out.on("error", (err) => {
    if (!res.headersSent) {
      res.writeHead(502, { "content-type": "text/plain" });
    }
    res.end(`bearer-proxy: upstream error: ${err.message}\n`);
  });
  req.pipe(out);
  res.on("close", () => out.destroy());
});

server.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}`);
});
for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => server.close(() => process.exit(0)));
}
