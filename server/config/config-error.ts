/** A bad config value; the message names the key. The server prints it and exits 1 at start. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
