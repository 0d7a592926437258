// One run of the chip bench: an emulated RP2040 (rp2040js) boots a UF2 with a
// littlefs image in its flash, is played a list of gestures on its button
// pins, and reports what its ring showed and what its flash did.
//
//   node bench/chip/run.mjs JOB.json OUT.json
//
// The job (written by bench/bench_chip.py): uf2, bootrom (rp2040js's
// demo/bootrom.ts, see docs/chip-bench.md), fs_image + fs_offset (written
// into flash at that offset), fs_out (the flash's file-system area after
// the run), pixel_pin, buttons (GPIO numbers), gestures ([button index,
// hold ms, gap ms after the release]), settle_ms (from first light to the
// first press), end_ms (after the last gesture; while the board still
// works its flash, the run goes on until it has left the flash alone for
// end_ms, up to end_cap_ms after the last gesture, so the drive it leaves
// is never cut inside a sector's rewrite), boot_timeout_ms,
// erase_ns / page_ns (the stall of one 4 KiB sector erase / one 256-byte
// page program), uart (collect UART0's output), ram_marker (report what
// follows each copy of these bytes in RAM at the end: the heap probe), long_into_erase (0, or
// the fraction of an erase's stall at which a long press that is next
// begins: longIntoErase below), usb_console (diagnostics only), pio_step
// (step the PIO with the CPU clock: CircuitPython, below).
//
// Emulator artifacts handled here (docs/chip-bench.md says why):
// * USB is left unattached: rp2040js's CDC host completes an empty packet
//   every 10 us while it has nothing to send, which keeps the core ~98%
//   busy and inflates every timing by about a third.
// * rp2040js's SSI ignores flash commands, so the ROM's flash_range_erase
//   and flash_range_program ('RE', 'RP' in the bootrom's function table)
//   are done here when the core reaches them: the bytes change as a
//   W25Q16JV's would (erase to 0xff, program ANDs), and the chip stalls for
//   the job's erase/page time (rp2_flash.c runs them with interrupts off
//   and XIP off: nothing else runs; button edges still land on their pins
//   at their own times and their interrupts wait for the stall's end).
// * rp2040js's WFI always sleeps, until an interrupt is newly raised. On the
//   Cortex-M0+ a WFI does not sleep while an enabled interrupt is already
//   pending, even with interrupts masked (PRIMASK): the pattern "mask, check
//   for work, WFI, unmask" relies on it, and CircuitPython's idle
//   (port_idle_until_interrupt) is that pattern. Without this, a timer
//   interrupt that arrives between the mask and the WFI is never taken (its
//   handler would arm the next one), and the board sleeps forever inside
//   time.sleep. So the runner wakes a WFI that finds one pending.
// * The QSPI pins read low in rp2040js: the BOOTSEL button on QSPI_SS is
//   set released (high), as the Pico's pull-up holds it.
// * rp2040js runs its PIO from a setTimeout (1000 instructions a call), which
//   never fires inside this synchronous loop, and counts but never waits
//   out an instruction's delay cycles or the clock divider. CircuitPython
//   sends a NeoPixel frame through a PIO state machine (fed by DMA), so with
//   pio_step the runner steps each enabled state machine itself, on the
//   CPU's clock: one instruction every (1 + its delay) x (the machine's
//   clock divider) CPU cycles, and a machine stalled on its FIFO (or a
//   WAIT) resumes at the time the CPU or the DMA feeds it. The ring's pin
//   changes at the PIO's own times, so the WS2812 decoder reads the real
//   bitstream from the pin, as with MicroPython's CPU-timed bitstream.

import fs from 'fs';
import { RP2040, GPIOPinState, USBCDC } from 'rp2040js';
import { WS2812Decoder } from './ws2812.mjs';

const MS = 1e6;
const CYCLE_NS = 8; // 125 MHz: MicroPython's clk_sys on the RP2040
const FLASH_XIP = 0x10000000;
const SECTOR = 4096;
const PAGE = 256;
const WFI = 0xbf30; // the Thumb WFI instruction
const LONG_HOLD_MIN_MS = 600; // a hold this long is a long press (engine_lite/vocab.py LONG_PRESS_MS)

export function loadBootrom(path) {
  const text = fs.readFileSync(path, 'utf8');
  const body = text.slice(text.indexOf('Uint32Array(['));
  return new Uint32Array(body.match(/0x[0-9a-fA-F]+/g).map((h) => parseInt(h, 16)));
}

export function loadUF2(buf, flash) {
  let blocks = 0;
  for (let o = 0; o + 512 <= buf.length; o += 512) {
    const v = new DataView(buf.buffer, buf.byteOffset + o, 512);
    if (v.getUint32(0, true) !== 0x0a324655 || v.getUint32(4, true) !== 0x9e5d5157) continue;
    const addr = v.getUint32(12, true);
    const size = v.getUint32(16, true);
    flash.set(buf.subarray(o + 32, o + 32 + size), addr - FLASH_XIP);
    blocks++;
  }
  if (!blocks) throw new Error('no UF2 blocks in the image');
}

// The bootrom's function table: pointer at 0x14, (code, address) halfword pairs.
function romFunction(mcu, code) {
  const c = code.charCodeAt(0) | (code.charCodeAt(1) << 8);
  let p = mcu.readUint16(0x14);
  for (;;) {
    const k = mcu.readUint16(p);
    if (!k) throw new Error('no ROM function ' + code);
    if (k === c) return mcu.readUint16(p + 2) & ~1;
    p += 4;
  }
}

export function run(job) {
  const mcu = new RP2040(); // its own SimulationClock: simulated time, never the host's
  const clock = mcu.clock;
  mcu.loadBootrom(loadBootrom(job.bootrom));
  loadUF2(fs.readFileSync(job.uf2), mcu.flash);
  if (job.fs_image) mcu.flash.set(fs.readFileSync(job.fs_image), job.fs_offset);
  const quiet = () => {};
  const errors = [];
  mcu.logger = { debug: quiet, info: quiet, warn: quiet, error: (tag, msg) => errors.length < 20 && errors.push(tag + ': ' + msg) };
  const core = mcu.core;
  const RE = romFunction(mcu, 'RE');
  const RP = romFunction(mcu, 'RP');

  const out = { frames: [], presses: [], flash: [], uart: '', first_light_ns: null, cycles_busy: 0 };
  const decoder = new WS2812Decoder((f) => {
    out.frames.push({ start_ns: f.start_ns, end_ns: f.end_ns, hex: Buffer.from(f.bytes).toString('hex'), bits: f.bits, bad: f.bad });
    if (out.first_light_ns === null) out.first_light_ns = f.start_ns;
  });
  let pinTime = null; // set while a PIO state machine steps: its own time, not the CPU's
  mcu.gpio[job.pixel_pin].addListener((state) => decoder.edge(state === GPIOPinState.High ? 1 : 0, pinTime === null ? clock.nanos : pinTime));
  const pios = job.pio_step ? mcu.pio : [];
  for (const p of pios) {
    p.run = () => {}; // never rp2040js's own setTimeout loop: pioCatchUp steps it
    for (const sm of p.machines) sm.atNs = 0;
  }
  // Every enabled state machine runs up to `now`: each step takes its
  // instruction's cycles (1 + delay, counted by rp2040js in sm.cycles) times
  // the clock divider (CLKDIV: 16.8 fixed point, 0 = 65536). A step that
  // takes no cycle is a stall (an empty TX FIFO, a WAIT): the machine then
  // waits at `now` for whatever feeds it. True while one is running.
  function pioCatchUp(now) {
    let active = false;
    for (const p of pios) {
      for (const sm of p.machines) {
        if (p.stopped || !sm.enabled) { sm.atNs = now; continue; } // so a machine enabled since the last call starts from then (a block never used before too)
        const period = ((sm.clockDivInt || 65536) + sm.clockDivFrac / 256) * CYCLE_NS;
        while (sm.atNs + period <= now) {
          const c0 = sm.cycles;
          pinTime = sm.atNs;
          sm.step();
          p.checkChangedPins();
          pinTime = null;
          const used = sm.cycles - c0;
          if (used <= 0) { sm.atNs = now; break; }
          sm.atNs += used * period;
        }
        if (!sm.waiting) active = true;
      }
    }
    return active;
  }
  out.pin_edges = []; // [gpio, level, ns] of the job's watch_pins (e.g. the Pico's LED, GP25: CircuitPython's status light)
  for (const g of job.watch_pins || []) mcu.gpio[g].addListener((state) => out.pin_edges.length < 1000 && out.pin_edges.push([g, state === GPIOPinState.High ? 1 : 0, clock.nanos]));
  if (job.uart) mcu.uart[0].onByte = (b) => (out.uart += String.fromCharCode(b));
  out.usb = '';
  if (job.usb_console) {
    // Diagnostics only (a board that shows no light says why here): with a
    // host attached the timings are inflated (the header says why).
    const cdc = new USBCDC(mcu.usbCtrl);
    cdc.onSerialData = (bytes) => (out.usb += Buffer.from(bytes).toString('latin1'));
    // rp2040js binds the LAST CDC interface of a composite device (CircuitPython's
    // data channel when boot.py enables it, not its console): what the device
    // sends on every other IN endpoint is kept too, by endpoint number.
    out.usb_endpoints = {};
    const hostWrite = mcu.usbCtrl.onEndpointWrite;
    mcu.usbCtrl.onEndpointWrite = (ep, buf) => {
      if (ep && ep !== cdc.inEndpoint) out.usb_endpoints[ep] = (out.usb_endpoints[ep] || '') + Buffer.from(buf).toString('latin1');
      hostWrite(ep, buf);
    };
  }
  for (const g of job.buttons) mcu.gpio[g].setInputValue(true); // released: the pull-up holds it high
  // The BOOTSEL button, released: on a Pico it pulls the flash's chip select
  // (QSPI_SS) low when pressed, and a pull-up holds it high otherwise.
  // rp2040js reads every QSPI pin low, so CircuitPython 10 (which reads the
  // button at start and waits for its release) would wait forever.
  Object.defineProperty(mcu.qspi[1], 'inputValue', { get: () => true }); // whatever its pad and override registers say (rp2040js leaves IO_QSPI unmodelled)

  let endAt = job.boot_timeout_ms * MS;
  let lastGestureEnd = null; // the last gesture's release, once the schedule is made
  // The button timeline: edges at absolute times, known once first light is seen.
  let edges = [];
  let next = 0;
  function schedule(t0) {
    let t = t0;
    for (const [b, hold, gap] of job.gestures) {
      if (b < 0) { t += hold * MS; continue; } // a wait line
      edges.push([t, job.buttons[b], false]);
      edges.push([t + hold * MS, job.buttons[b], true]);
      out.presses.push({ button: b, down_ns: t, up_ns: t + hold * MS, hold_ms: hold });
      t += (hold + gap) * MS;
    }
    return t;
  }
  function edgesUntil(t) {
    while (next < edges.length && edges[next][0] <= t) {
      const [, pin, v] = edges[next++];
      mcu.gpio[pin].setInputValue(v);
    }
  }
  // A long press begun inside an erase: when an erase starts and the next
  // press not yet begun is a long one, the finger comes down at `at` (a
  // fraction of the way into the stall) instead, and every later gesture
  // moves with it; only if a released button's gap stays over 30 ms (more
  // than the debounce: a real second press, not a bounce).
  function longIntoErase(at) {
    const p = (next + 1) >> 1; // the first press whose down edge is still to come
    if (p >= out.presses.length || out.presses[p].hold_ms < LONG_HOLD_MIN_MS || out.presses[p].into_erase) return;
    const prevUp = p > 0 ? out.presses[p - 1].up_ns : 0;
    if (at < prevUp + 30 * MS) return;
    const delta = at - out.presses[p].down_ns;
    for (let i = 2 * p; i < edges.length; i++) edges[i][0] += delta;
    for (let i = p; i < out.presses.length; i++) {
      out.presses[i].down_ns += delta;
      out.presses[i].up_ns += delta;
    }
    out.presses[p].into_erase = true;
    endAt += delta;
    if (lastGestureEnd !== null) lastGestureEnd += delta;
  }
  // Advance the clock to `t` with the core stopped (a flash stall), edges on time.
  function stall(ns) {
    const end = clock.nanos + ns;
    while (next < edges.length && edges[next][0] < end) {
      clock.tick(Math.max(0, edges[next][0] - clock.nanos));
      pioCatchUp(clock.nanos); // the state machines run up to the edge with the pins as they were
      edgesUntil(clock.nanos);
    }
    clock.tick(end - clock.nanos);
    pioCatchUp(clock.nanos);
  }
  function flashOp(pc) {
    const t = clock.nanos;
    if (lastGestureEnd !== null && t >= lastGestureEnd) endAt = Math.min(Math.max(endAt, t + job.end_ms * MS), lastGestureEnd + (job.end_cap_ms || job.end_ms) * MS);
    if (pc === RE) {
      const addr = core.registers[0] >>> 0;
      const count = core.registers[1] >>> 0;
      mcu.flash.fill(0xff, addr, addr + count);
      const sectors = Math.ceil(count / SECTOR);
      out.flash.push({ op: 'E', at_ns: t, addr, n: sectors, stall_ns: sectors * job.erase_ns });
      if (job.long_into_erase) longIntoErase(t + job.long_into_erase * sectors * job.erase_ns);
      stall(sectors * job.erase_ns);
    } else {
      const addr = core.registers[0] >>> 0;
      const data = core.registers[1] >>> 0;
      const count = core.registers[2] >>> 0;
      for (let i = 0; i < count; i++) mcu.flash[addr + i] &= mcu.readUint8(data + i);
      const pages = Math.ceil(count / PAGE);
      out.flash.push({ op: 'P', at_ns: t, addr, n: pages, stall_ns: pages * job.page_ns });
      stall(pages * job.page_ns);
    }
    core.PC = core.registers[14] & ~1; // return to the caller (LR)
  }

  let started = false;
  let pioBusy = false;
  core.PC = FLASH_XIP; // boot2 at the start of flash, as rp2040js's MicroPython demo does
  while (clock.nanos < endAt) {
    if (!started && out.first_light_ns !== null) {
      started = true;
      lastGestureEnd = schedule(out.first_light_ns + job.settle_ms * MS);
      endAt = lastGestureEnd + job.end_ms * MS;
    }
    if (next < edges.length && edges[next][0] <= clock.nanos) edgesUntil(clock.nanos);
    if (core.waiting) {
      let d = clock.nanosToNextAlarm;
      if (next < edges.length) d = Math.min(d || Infinity, edges[next][0] - clock.nanos);
      if (!(d > 0)) d = 1000;
      if (pioBusy) d = Math.min(d, 1000); // a running state machine: small steps, so the DMA feeds it on time
      clock.tick(Math.min(d, endAt - clock.nanos + 1));
      if (pios.length) pioBusy = pioCatchUp(clock.nanos);
      decoder.idle(clock.nanos);
      continue;
    }
    const pc = core.PC;
    if (pc === RE || pc === RP) {
      flashOp(pc);
      continue;
    }
    const wfi = core.readUint16(pc & ~1) === WFI;
    const cycles = core.executeInstruction();
    if (wfi && (core.pendingInterrupts & core.enabledInterrupts || core.pendingSystick || core.pendingPendSV)) core.waiting = false; // ARM: a WFI with an interrupt already pending does not sleep (below)
    out.cycles_busy += cycles;
    clock.tick(cycles * CYCLE_NS);
    if (pios.length) pioBusy = pioCatchUp(clock.nanos);
    if (decoder.bits.length) decoder.idle(clock.nanos);
  }
  decoder.idle(clock.nanos + 1e9);
  out.end_ns = clock.nanos;
  // What the ring's hardware was doing at the end (diagnostics: a board that
  // stopped drawing inside a NeoPixel write shows a machine or a channel busy).
  out.pio_end = pios.map((p) => p.machines.map((sm) => ({ enabled: sm.enabled, waiting: sm.waiting, pc: sm.pc, tx: sm.txFIFO.itemCount })));
  out.dma_end = mcu.dma.channels.filter((c) => c.active).map((c) => ({ index: c.index, left: c.transCount, treq: c.treq }));
  out.pc_end = core.PC >>> 0;
  out.started = started;
  out.errors = errors;
  if (job.ram_marker) {
    // The heap probe's readings: a bytearray in the guest's heap that begins
    // with the marker (bench_chip.PROBE); every copy found, with what follows.
    const m = Buffer.from(job.ram_marker, 'latin1');
    const ram = Buffer.from(mcu.sram.buffer, mcu.sram.byteOffset, mcu.sram.byteLength);
    out.ram_marks = [];
    for (let i = ram.indexOf(m); i >= 0; i = ram.indexOf(m, i + 1)) out.ram_marks.push(ram.subarray(i + m.length, i + m.length + (job.ram_marker_bytes || 24)).toString('hex'));
  }
  if (job.fs_out) fs.writeFileSync(job.fs_out, mcu.flash.subarray(job.fs_offset, job.fs_offset + job.fs_size));
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const t0 = Date.now();
  const out = run(job);
  out.wall_s = (Date.now() - t0) / 1000;
  fs.writeFileSync(process.argv[3], JSON.stringify(out));
  process.exit(0); // a firmware that started a PIO state machine (the Pico W's radio) leaves rp2040js a host timer that never ends
}
