import fs from 'fs';
import { RP2040 } from 'rp2040js';
import { loadBootrom, loadUF2 } from './run.mjs';
const [uf2, bootrom, fsimg, fsoff, ms] = process.argv.slice(2);
const mcu = new RP2040();
mcu.loadBootrom(loadBootrom(bootrom));
loadUF2(fs.readFileSync(uf2), mcu.flash);
mcu.flash.set(fs.readFileSync(fsimg), Number(fsoff));
mcu.logger = { debug(){}, info(){}, warn(){}, error(c, m){ }, };
const core = mcu.core;
core.PC = 0x10000000;
const clock = mcu.clock;
let next = 0; const step = 2e6; const end = Number(ms) * 1e6;
const seen = {};
while (clock.nanos < end) {
  if (core.waiting) { let d = clock.nanosToNextAlarm; if (!(d > 0)) d = 1000; clock.tick(d); }
  else { const c = core.executeInstruction(); clock.tick(c * 8); }
  if (clock.nanos >= next) { next += step; const pc = core.PC >>> 0; seen[pc.toString(16)] = (seen[pc.toString(16)]||0)+1; if (Object.keys(seen).length < 400) {} }
}
console.log(JSON.stringify(Object.entries(seen).sort((a,b)=>b[1]-a[1]).slice(0,40)));
