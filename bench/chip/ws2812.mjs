// WS2812 frames from the transitions of the ring's data pin, by their timing.
//
// Why by timing: MicroPython's neopixel on rp2 sends its buffer with
// machine.bitstream, which toggles the pin from the CPU in cycle-counted
// loops (ports/rp2/machine_bitstream.c). A WS2812 reads a bit from the width
// of its high pulse: about 0.4 us is a 0, about 0.8 us a 1 (datasheet
// T0H/T1H); the bit period is 1.25 us and a low of more than 50 us latches
// the frame (RES). So the decoder needs only the times of the edges.
//
// The decoder is fed (level, time_ns) for every change of the pin. A frame
// is the bits between two latch gaps, 24 bits a pixel, most significant bit
// first, in the strip's byte order (GRB for the ring: firmware/pinmap.json).
// A frame whose bit count is not a whole number of pixels is kept, marked
// `bad` with its bit count, so a glitch is seen, never silently dropped.

export const T1H_MIN_NS = 625; // between T0H (0.4 us) and T1H (0.8 us): the datasheet's midpoint
export const LATCH_NS = 50000; // RES: a low this long ends a frame

export class WS2812Decoder {
  constructor(onFrame) {
    this.onFrame = onFrame; // called with {start_ns, end_ns, bytes: Uint8Array, bits, bad}
    this.level = 0;
    this.riseAt = -1;
    this.fallAt = -1;
    this.bits = [];
    this.startAt = -1;
  }

  edge(level, tNs) {
    if (level === this.level) return;
    this.level = level;
    if (level) {
      if (this.bits.length && this.fallAt >= 0 && tNs - this.fallAt >= LATCH_NS) this.flush();
      if (!this.bits.length) this.startAt = tNs;
      this.riseAt = tNs;
    } else {
      if (this.riseAt < 0) return; // a fall before any rise: the pin's first setting
      this.bits.push(tNs - this.riseAt >= T1H_MIN_NS ? 1 : 0);
      this.fallAt = tNs;
    }
  }

  // The pin has been low since fallAt; at time tNs, is the frame latched?
  idle(tNs) {
    if (this.bits.length && !this.level && tNs - this.fallAt >= LATCH_NS) this.flush();
  }

  flush() {
    const n = this.bits.length;
    const bytes = new Uint8Array(n >> 3);
    for (let i = 0; i + 7 < n; i += 8) {
      let v = 0;
      for (let j = 0; j < 8; j++) v = (v << 1) | this.bits[i + j];
      bytes[i >> 3] = v;
    }
    this.bits = [];
    this.onFrame({ start_ns: this.startAt, end_ns: this.fallAt, bytes, bits: n, bad: n % 24 !== 0 });
  }
}

// Bytes of a frame in the strip's order (e.g. "GRB") -> [[r, g, b], ...].
export function pixels(bytes, order = 'GRB') {
  const out = [];
  const ri = order.indexOf('R');
  const gi = order.indexOf('G');
  const bi = order.indexOf('B');
  for (let i = 0; i + 2 < bytes.length; i += 3) out.push([bytes[i + ri], bytes[i + gi], bytes[i + bi]]);
  return out;
}
