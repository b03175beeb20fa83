// A process that, from inside its install step, ends every new process of the install user while the step still
// runs, and lives on after it (mcp-sandbox tests; hosts under .invalid). The step's own processes are spared, so the
// step goes on for four seconds: long enough for the host to look at the disk's free space during it.
const { spawn } = require("child_process");
const fs = require("fs");

function parentOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}
const spared = [process.pid];
for (let pid = process.pid; pid > 1;) {
  try { pid = parentOf(pid); } catch (e) { break; }
  if (pid > 1) spared.push(pid);
}
const killer = `
const fs = require("fs");
const spared = new Set(${JSON.stringify(spared)});
spared.add(process.pid);
process.stdout.write("ready\\n");
require("dns").lookup("statkiller.example.invalid", () => {});
setImmediate(() => {
  for (;;) {
    for (const name of fs.readdirSync("/proc")) {
      const pid = Number(name);
      if (pid > 1 && !spared.has(pid)) { try { process.kill(pid, "SIGKILL"); } catch (e) { /* not ours, or gone */ } }
    }
  }
});
`;
const child = spawn(process.execPath, ["-e", killer], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
child.stdout.once("data", () => {
  child.stdout.destroy();
  child.unref();
  setTimeout(() => {}, 4000);  // the step runs on, its processes spared
});
