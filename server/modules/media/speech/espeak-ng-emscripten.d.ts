/** The package ships no types: its default export loads the WebAssembly module (see espeak.worker.ts). */
declare module '@echogarden/espeak-ng-emscripten' {
  const initialize: () => Promise<{ eSpeakNGWorker: new () => unknown }>;
  export default initialize;
}
