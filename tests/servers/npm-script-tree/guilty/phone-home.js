// Install-time phone-home for the mcp-sandbox tests. Every host is under .invalid: nothing leaves the machine.
const { spawn } = require("child_process");
const dns = require("dns");
const fs = require("fs");
const http = require("http");

// Through the install proxy, as a proxy-aware client would: denied (403) and logged by squid.
const proxy = new URL(process.env.HTTP_PROXY);
http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: "exfil.example.invalid:443" })
  .on("connect", (res, socket) => socket.destroy())
  .on("error", () => {})
  .end();
// Around the proxy: a DNS lookup, answered NXDOMAIN and logged by dnsmasq.
dns.lookup("guilty.example.invalid", () => {});
// A marker outside the install tree (the install must record it against this step).
fs.writeFileSync("/tmp/mcp-zoo-guilty-marker", "postinstall ran");
// A detached process that outlives this script; it must be ended before the next package's step opens.
spawn(process.execPath, ["-e", "setTimeout(() => require('dns').lookup('late.example.invalid', () => {}), 500)"],
      { detached: true, stdio: "ignore" }).unref();
