import { createServer, IncomingMessage, ServerResponse, type Server } from "node:http";
import type { Socket } from "node:net";
import type { Express } from "express";

/**
 * The HTTP server whose request listener is `app`, creating each request and response with
 * Express's prototypes from the start. Express otherwise swaps the prototype of every request and
 * response it is handed (`Object.setPrototypeOf` in `app.handle`), which costs V8 its inline caches
 * on both objects for the rest of the request: on this machine about 50 µs of CPU per request, more
 * than Express's routing and as much as the whole of a plain node:http answer (docs/benchmarks.md).
 * Handed objects that already have them, Express's swap is a no-op.
 */
export function expressServer(app: Express): Server {
  function AppRequest(this: IncomingMessage, socket: Socket) {
    (IncomingMessage as unknown as (this: IncomingMessage, socket: Socket) => void).call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: ServerResponse, req: IncomingMessage, options: object) {
    (ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options: object) => void).call(this, req, options);
  }
  AppResponse.prototype = app.response;
  return createServer(
    {
      IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof ServerResponse,
    },
    app,
  );
}
