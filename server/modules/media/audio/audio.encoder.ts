/** What every encoder is: mono 16-bit samples in, encoded bytes out, as they become available. */
export interface AudioEncoder {
  /** Bytes for these samples; may be empty (encoders work in whole frames and keep the rest). */
  write(samples: Int16Array): Uint8Array[];
  /** The last frames and trailer. */
  end(): Uint8Array[];
  /** With the whole file in hand: fills in what a stream cannot know up front (lengths, checksums). */
  finalize?(file: Buffer): Buffer;
  /** Frees what the garbage collector cannot (WebAssembly memory); called however the stream ends. */
  dispose?(): void;
}
