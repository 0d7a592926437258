// Runs one MicroPython program in the official WebAssembly port (32-bit),
// for bench/bench_board.py's 32-bit heap figure. Never a test gate.
//   MPWASM=.../micropython.mjs node bench/mp_wasm_run.mjs TREE_DIR PROGRAM.py [--drive]
// TREE_DIR (the guest tree of tests/kit/mpy_harness.py: the .mpy bundle and
// helpers) is copied into the port's in-memory file system as /board, the
// working directory and first on sys.path. A Python exception -> one line
// "GUEST_ERROR type: message" and exit status 3.
// --drive: then call the program's step() until it returns False, and its
// finish(), each as a call of its own. This port's gc.collect() frees
// nothing allocated during the current call from JavaScript (its heap grows
// instead), so a collection between gestures needs a call per gesture.
import fs from "fs";
import path from "path";

const [tree, program, drive] = process.argv.slice(2);
const mod = await import(path.resolve(process.env.MPWASM));
const mp = await mod.loadMicroPython({
  stdout: (line) => process.stdout.write(line + "\n"),
  stderr: (line) => process.stderr.write(line + "\n"),
});
function copy(src, dst) {
  mp.FS.mkdirTree(dst);
  for (const e of fs.readdirSync(src, { withFileTypes: true })) {
    const s = path.join(src, e.name);
    if (e.isDirectory()) copy(s, dst + "/" + e.name);
    else mp.FS.writeFile(dst + "/" + e.name, fs.readFileSync(s));
  }
}
copy(tree, "/board");
mp.FS.chdir("/board");
try {
  mp.runPython("import sys\nsys.path.insert(0, '/board')\n" + fs.readFileSync(program, "utf8"));
  if (drive === "--drive") {
    do mp.runPython("_more = _g['step']()");
    while (mp.globals.get("_more") === true);
    mp.runPython("_g['finish']()");
  }
} catch (e) {
  const msg = String(e.message || e).trim().split("\n");
  process.stdout.write("GUEST_ERROR " + msg[msg.length - 1] + "\n");
  process.exit(3);
}
