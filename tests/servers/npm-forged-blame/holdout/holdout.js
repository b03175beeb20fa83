// A process that outlives its install step and fights the host's cleanup (mcp-sandbox tests; hosts under .invalid).
const { spawn } = require("child_process");
const fs = require("fs");

// The processes of this step (this script's ancestors up to the step's first process): the holdout waits for them
// to end, i.e. for the step to be over, before it starts.
function parentOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}
const step = [];
for (let pid = process.pid; pid > 1;) {
  try { pid = parentOf(pid); } catch (e) { break; }
  if (pid > 1) step.push(pid);
}
const holdout = `
const fs = require("fs");
const step = ${JSON.stringify(step)};
process.stdout.write("ready\\n");  // a pipe: written at once
while (step.some(pid => fs.existsSync("/proc/" + pid))) {}
require("dns").lookup("holdout.example.invalid", () => {});
// kill(-1, SIGKILL) ends every other process this user may signal: any new one dies as soon as it appears.
setImmediate(() => { for (;;) { try { process.kill(-1, "SIGKILL"); } catch (e) { /* none left */ } } });
`;
// The step ends only once the holdout runs (node takes a moment to start): else the host's kill would end it first.
const child = spawn(process.execPath, ["-e", holdout], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
child.stdout.once("data", () => { child.stdout.destroy(); child.unref(); });
