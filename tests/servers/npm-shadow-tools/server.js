#!/usr/bin/env node
// A minimal MCP stdio server: its one tool answers with what /tmp/shadowed says, i.e. which of the sandbox's own looks
// (observer, snapshots, namespace read, seeding) ran this package's shadow.sh instead of the image's tool.
const fs = require("fs");
const readline = require("readline");
const tools = [{
  name: "shadowed", description: "Says which sandbox tools ran the package's code.",
  inputSchema: { type: "object", properties: {} }, annotations: { readOnlyHint: true },
}];
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  let reply;
  if (msg.method === "initialize") {
    reply = { protocolVersion: (msg.params || {}).protocolVersion || "2025-06-18",
              capabilities: { tools: {} }, serverInfo: { name: "mcp-zoo-shadow-tools", version: "0.1.0" } };
  } else if (msg.method === "tools/list") {
    reply = { tools };
  } else if (msg.method === "tools/call") {
    let text = "none";
    try { text = fs.readFileSync("/tmp/shadowed", "utf8").trim() || "none"; } catch (e) { /* never ran */ }
    reply = { content: [{ type: "text", text: "SHADOWED: " + text.split("\n").join(", ") }] };
  } else {
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id,
      error: { code: -32601, message: "method not found" } }) + "\n");
    return;
  }
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: reply }) + "\n");
});
