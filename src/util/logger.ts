// The one logger shape every layer takes. Homebridge's own Logging fits it, and so does a test's
// recording logger; files take this instead of declaring their own copy.
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
}

/**
 * A logger whose every line starts with a device's name ("Front Door: locked."): the one place for
 * that prefix. The name is read per line, so a rename shows in the next line.
 */
export function deviceLogger(log: Logger, name: () => string): Logger {
  return {
    info: (message) => {
      log.info(`${name()}: ${message}`);
    },
    warn: (message) => {
      log.warn(`${name()}: ${message}`);
    },
    error: (message) => {
      log.error(`${name()}: ${message}`);
    },
    debug: (message) => {
      log.debug(`${name()}: ${message}`);
    },
  };
}
