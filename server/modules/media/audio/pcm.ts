/**
 * The one sample format audio passes through between engines, decoders and encoders: mono signed 16-bit
 * PCM, delivered in chunks. Every encoder writes `outputSampleRate` (24 kHz, as OpenAI's speech API), so
 * whatever rate an engine or upstream produces is resampled once, here.
 */

export const outputSampleRate = 24_000;

/** Mono samples and their rate (a decoder learns the rate from the first frame, so it travels with the samples). */
export interface PcmChunk {
  samples: Int16Array;
  sampleRate: number;
}

export function floatToInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32768)));
  }
  return out;
}

/** Averages the channels (decoders hand out one Float32Array per channel). */
export function downmix(channels: Float32Array[], length: number): Float32Array {
  if (channels.length === 1) return channels[0]!.subarray(0, length);
  const out = new Float32Array(length);
  for (const channel of channels) for (let i = 0; i < length; i++) out[i]! += channel[i]! / channels.length;
  return out;
}

/**
 * Streaming windowed-sinc resampler (Blackman window, 16 zero crossings a side, a precomputed kernel
 * table with 512 phases). Linear interpolation would alias audibly on downsampling (44.1/48 kHz music
 * from an upstream); this is transparent for speech and fine for music at 24 kHz.
 */
export class Resampler {
  private static readonly phases = 512;
  private readonly from: number;
  private readonly to: number;
  private readonly step: number;
  private readonly halfTaps: number;
  private readonly table: Float32Array;
  /** Input samples still needed, the first of them at absolute input index `bufferStart`. */
  private buffer = new Float32Array(0);
  private bufferStart = 0;
  private inputCount = 0;
  private outputCount = 0;

  constructor(from: number, to: number) {
    this.from = from;
    this.to = to;
    this.step = from / to;
    const cutoff = Math.min(1, to / from) * 0.97;
    this.halfTaps = Math.ceil(16 / cutoff);
    const taps = this.halfTaps * 2;
    const phases = Resampler.phases;
    this.table = new Float32Array((phases + 1) * taps);
    for (let phase = 0; phase <= phases; phase++) {
      for (let j = 0; j < taps; j++) {
        const distance = j - this.halfTaps + 1 - phase / phases;
        const x = distance * cutoff;
        const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
        const w = (distance + this.halfTaps) / (2 * this.halfTaps);
        const window = w <= 0 || w >= 1 ? 0 : 0.42 - 0.5 * Math.cos(2 * Math.PI * w) + 0.08 * Math.cos(4 * Math.PI * w);
        this.table[phase * taps + j] = cutoff * sinc * window;
      }
    }
  }

  push(input: Int16Array): Int16Array {
    if (this.from === this.to) return input;
    const merged = new Float32Array(this.buffer.length + input.length);
    merged.set(this.buffer);
    for (let i = 0; i < input.length; i++) merged[this.buffer.length + i] = input[i]! / 32768;
    this.buffer = merged;
    this.inputCount += input.length;
    return this.drain(this.inputCount, Infinity);
  }

  /** The tail, as if silence followed, up to exactly `input length × to/from` samples in all. */
  flush(): Int16Array {
    if (this.from === this.to) return new Int16Array(0);
    return this.drain(this.inputCount + this.halfTaps + 1, Math.round((this.inputCount * this.to) / this.from));
  }

  /** Every output sample whose kernel lies within the first `available` input samples (beyond the buffer: silence). */
  private drain(available: number, maxOutput: number): Int16Array {
    const taps = this.halfTaps * 2;
    const out: number[] = [];
    while (this.outputCount < maxOutput) {
      const t = this.outputCount * this.step;
      const base = Math.floor(t);
      if (base + this.halfTaps >= available) break;
      const row = Math.round((t - base) * Resampler.phases) * taps;
      const first = base - this.halfTaps + 1 - this.bufferStart;
      let sum = 0;
      for (let j = Math.max(0, -first); j < taps && first + j < this.buffer.length; j++) sum += this.buffer[first + j]! * this.table[row + j]!;
      out.push(sum);
      this.outputCount += 1;
    }
    const drop = Math.min(this.buffer.length, Math.floor(this.outputCount * this.step) - this.halfTaps + 1 - this.bufferStart);
    if (drop > 0) {
      this.buffer = this.buffer.slice(drop);
      this.bufferStart += drop;
    }
    return floatToInt16(Float32Array.from(out));
  }
}

/** Resamples PCM chunks to `rate` (passing them through when they already are). The rate may not change mid-stream. */
export async function* resampled(chunks: AsyncIterable<PcmChunk>, rate: number): AsyncIterable<Int16Array> {
  let resampler: Resampler | null = null;
  let inputRate: number | null = null;
  for await (const chunk of chunks) {
    if (inputRate === null) {
      inputRate = chunk.sampleRate;
      if (inputRate !== rate) resampler = new Resampler(inputRate, rate);
    } else if (chunk.sampleRate !== inputRate) {
      throw new Error(`sample rate changed mid-stream (${inputRate} → ${chunk.sampleRate} Hz)`);
    }
    const out = resampler ? resampler.push(chunk.samples) : chunk.samples;
    if (out.length > 0) yield out;
  }
  const tail = resampler?.flush();
  if (tail && tail.length > 0) yield tail;
}
