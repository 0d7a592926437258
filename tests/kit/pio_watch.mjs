// The buttons' PIO watch (firmware/keys_cp.py PROGRAM) run on rp2040js's PIO:
// the words the state machine pushes for a timeline of pin levels, each with
// the time it was pushed (where the DMA takes it). tests/board/test_keys_pio.py.
//
//   node tests/kit/pio_watch.mjs < JOB.json > OUT.json
//
// The job: program ([u16]: assembled words, loaded at offset 0), wrap_target,
// wrap, in_base (the first of the eight pins), clkdiv_int (15625: 125 MHz /
// 8 kHz), timeline ([[t_ns, levels_byte], ...]: from t_ns on, pin in_base + i
// is at bit i of levels_byte; the first entry should be at 0), end_ns,
// dma_hold (optional [[start_ns, end_ns], ...]: the DMA takes nothing then,
// as when it reached the ring's end inside a flash stall and waits for its
// interrupt to restart it).
// Out: {words: [[word, pop_ns], ...], rxstall, rxstall_ns, period_ns}: each
// word the RX FIFO held, popped at the step that pushed it (the DMA's DREQ
// answers within cycles of the PIO's 8 kHz clock) or at a hold's end;
// FDEBUG's RXSTALL bit for SM0 (a push found the FIFO full and its word was
// dropped: never without a hold) and the first step that set it (or null).
//
// The machine is configured through the PIO's registers at the RP2040
// datasheet's offsets (rp2040js 1.4.1 dist/esm/peripherals/pio.js decodes
// them the same way) as CircuitPython's rp2pio.StateMachine does for
// firmware/keys_cp.py PioWatch: in_base, IN shift left, OUT shift right
// (rp2pio's default; the program uses no OUT), no autopush/pull, RX FIFO
// joined (rp2040js keeps a 4-word FIFO whatever FJOIN says), wrap, CLKDIV int 15625 frac 0; the pads input-
// enabled with pull-ups (rp2040js's reset pad value has input enable off,
// the chip's has it on: CircuitPython writes it either way) and IO_BANK0
// FUNCSEL = PIO0. Stepped as bench/chip/run.mjs pioCatchUp does: each
// step takes its instruction's cycles (sm.cycles) times the divider.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const RP2040JS = resolve(HERE, '../../bench/chip/node_modules/rp2040js/dist/esm/index.js');
const { RP2040 } = await import(pathToFileURL(RP2040JS).href);

const CYCLE_NS = 8; // clk_sys 125 MHz (CircuitPython's on the RP2040)
// PIO registers (RP2040 datasheet 3.7)
const CTRL = 0x000;
const FDEBUG = 0x008;
const RXF0 = 0x020;
const INSTR_MEM0 = 0x048;
const SM0_CLKDIV = 0x0c8;
const SM0_EXECCTRL = 0x0cc;
const SM0_SHIFTCTRL = 0x0d0;
const SM0_INSTR = 0x0d8;
const SM0_PINCTRL = 0x0dc;
const FDEBUG_RXSTALL = 1 << 0;
const SHIFTCTRL_OUT_SHIFTDIR = 1 << 19; // 1: right
const SHIFTCTRL_IN_SHIFTDIR = 1 << 18; // 0: left
const SHIFTCTRL_FJOIN_RX = 1 << 31;
// pads and IO (datasheet 2.19)
const PADS_BANK0 = 0x4001c000;
const PAD_IE = 0x40, PAD_DRIVE_4MA = 0x10, PAD_PUE = 0x08, PAD_SCHMITT = 0x02;
const IO_BANK0 = 0x40014000;
const FUNCSEL_PIO0 = 6;

const job = JSON.parse(readFileSync(0, 'utf8'));
const mcu = new RP2040();
const pio = mcu.pio[0];
pio.run = () => {}; // never rp2040js's own loop (CTRL's write would start it): stepped below
const sm = pio.machines[0];

for (let i = 0; i < 8; i++) {
  const n = job.in_base + i;
  mcu.writeUint32(PADS_BANK0 + 4 + 4 * n, PAD_IE | PAD_DRIVE_4MA | PAD_PUE | PAD_SCHMITT);
  mcu.writeUint32(IO_BANK0 + 4 + 8 * n, FUNCSEL_PIO0);
}
const timeline = job.timeline;
function setLevels(levels) {
  for (let i = 0; i < 8; i++) mcu.gpio[job.in_base + i].setInputValue(!!((levels >> i) & 1));
}
setLevels(timeline.length && timeline[0][0] <= 0 ? timeline[0][1] : 0xff);

job.program.forEach((w, i) => pio.writeUint32(INSTR_MEM0 + 4 * i, w & 0xffff));
pio.writeUint32(SM0_CLKDIV, ((job.clkdiv_int & 0xffff) << 16) | (0 << 8));
pio.writeUint32(SM0_EXECCTRL, ((job.wrap & 0x1f) << 12) | ((job.wrap_target & 0x1f) << 7));
pio.writeUint32(SM0_SHIFTCTRL, (SHIFTCTRL_FJOIN_RX | SHIFTCTRL_OUT_SHIFTDIR | (0 & SHIFTCTRL_IN_SHIFTDIR)) >>> 0);
pio.writeUint32(SM0_PINCTRL, (job.in_base & 0x1f) << 15); // IN_BASE; no out, set or side-set pins
pio.writeUint32(SM0_INSTR, 0x0000); // jmp 0: the program's start (pio_sm_init)
pio.writeUint32(CTRL, 1 | (1 << 4)); // SM0 enabled and restarted (SM_RESTART; rp2040js only warns at CLKDIV_RESTART)

const period = ((sm.clockDivInt || 65536) + sm.clockDivFrac / 256) * CYCLE_NS;
const holds = job.dma_hold || [];
const words = [];
let rxstallNs = null;
let next = 0;
let at = 0;
while (at < job.end_ns) {
  while (next < timeline.length && timeline[next][0] <= at) setLevels(timeline[next++][1]);
  const c0 = sm.cycles;
  sm.step();
  pio.checkChangedPins();
  if (rxstallNs === null && pio.readUint32(FDEBUG) & FDEBUG_RXSTALL) rxstallNs = at;
  const held = holds.some(([a, b]) => a <= at && at < b);
  while (!held && !sm.rxFIFO.empty) words.push([pio.readUint32(RXF0) >>> 0, at]);
  const used = sm.cycles - c0;
  if (used <= 0) throw new Error('the state machine stalled at ' + at + ' ns (pc ' + sm.pc + ')');
  at += used * period;
}
process.stdout.write(JSON.stringify({ words, rxstall: !!(pio.readUint32(FDEBUG) & FDEBUG_RXSTALL), rxstall_ns: rxstallNs, period_ns: period }) + '\n');
