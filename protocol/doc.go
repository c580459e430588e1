// Package protocol is the broker's connection layer: it accepts Kafka client
// connections, reads size-prefixed frames, parses request headers (v1 and
// v2), decodes request bodies with kmsg, dispatches them to a Handler in
// request order and writes the responses back in the same order. It holds
// no business logic.
//
// # API
//
//   - Request, Response, Handler, Frame, ConnInfo (api.go): the contract with
//     the server package.
//   - Server: NewServer(ServerConfig, Handler, *slog.Logger), Serve(ctx,
//     listener, listenerName), Close().
//   - ServerConfig: socket.request.max.bytes, the in-flight bound per
//     connection, connections.max.idle.ms, and a prometheus Registerer for
//     kafka_network_requestmetrics_requests_total{request} and
//     kafka_server_socket_server_metrics_{incoming,outgoing}_byte_total{listener}.
//
// # Invariants
//
//   - Responses leave a connection in request order. A Response with Wait
//     runs in its own goroutine; later responses queue behind it.
//   - At most MaxInFlightPerConn requests of a connection await their
//     response; the connection is not read while that many do.
//   - Anything the broker cannot parse (size out of range, truncated frame,
//     short header, unknown API key, unsupported version, undecodable body)
//     is logged with the remote address and closes that connection. The one
//     exception is ApiVersions at an unsupported version, which reaches the
//     handler as a v0 request with RequestedVersion set (KIP-511).
//   - A panic in the handler closes only that connection.
//   - ApiVersions responses always use response header v0; other flexible
//     responses use header v1 (an empty tag buffer).
//   - Request frames are never reused: decoded bodies alias them.
//   - A Response's Msg belongs to this package once returned: it is
//     SetVersion'd and encoded on the connection's write loop, so a handler
//     must not share one Msg value between requests.
//
// # Goroutines and locks
//
// Per connection: the read loop (calls Handler.Handle), the write loop, and
// one goroutine per running Wait. They share only channels: queue (read loop
// to write loop, in order), slots (the in-flight semaphore) and each Wait's
// result channel. Cancelling the connection's context closes its socket,
// which unblocks both loops; Handler.ConnClosed runs after all three kinds
// of goroutine ended. Server.mu guards only the listener set and the closed
// flag, and is never held while calling out.
package protocol
