// The one logger shape every layer takes. Homebridge's own Logging fits it, and so does a test's
// recording logger; files take this instead of declaring their own copy.
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
}
