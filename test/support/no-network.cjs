// Preloaded (node --require) into the tools the tests run, such as @redocly/cli: a connection to any
// host but this machine is refused before it starts (before its name is even looked up) and
// reported on standard error, so a test sees every attempt to reach the network.
const net = require("node:net");

const LOCAL = new Set(["localhost", "127.0.0.1", "::1"]);
const connect = net.Socket.prototype.connect;

net.Socket.prototype.connect = function (...args) {
  // net.connect passes its normalized [options, callback] as one array.
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const options = typeof first === "object" && first !== null ? first : { port: first, host: args[1] };
  if (!options.path && !LOCAL.has(options.host ?? "localhost")) {
    process.stderr.write(`NETWORK REFUSED: ${options.host}:${options.port}\n`);
    process.nextTick(() => this.destroy(new Error(`connection to ${options.host} refused: tests stay on this machine`)));
    return this;
  }
  return connect.apply(this, args);
};
