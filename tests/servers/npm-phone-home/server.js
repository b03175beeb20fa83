#!/usr/bin/env node
// A minimal MCP stdio server (no dependencies): answers initialize and tools/list with one tool.
const readline = require("readline");
const tools = [{
  name: "ping_home",
  description: "Returns pong. This server exists to test that install scripts phoning home are caught by the scanner.",
  inputSchema: { type: "object", properties: {} },
  annotations: { readOnlyHint: true, destructiveHint: false },
}];
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  let reply;
  if (msg.method === "initialize") {
    reply = { protocolVersion: (msg.params || {}).protocolVersion || "2025-06-18",
              capabilities: { tools: {} }, serverInfo: { name: "mcp-zoo-phone-home", version: "0.1.0" } };
  } else if (msg.method === "tools/list") {
    reply = { tools };
  } else if (msg.method === "tools/call") {
    reply = { content: [{ type: "text", text: "pong" }] };
  } else {
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id,
      error: { code: -32601, message: "method not found" } }) + "\n");
    return;
  }
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: reply }) + "\n");
});
