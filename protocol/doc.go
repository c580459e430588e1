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
//     connection, connections.max.idle.ms, queued.max.request.bytes and
//     queued.max.requests, Kafka's connection quotas (max.connections,
//     max.connections.per.ip and its overrides, max.connection.creation.rate)
//     and a prometheus Registerer for the request, byte, connection and
//     memory pool metrics (metrics.go).
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
//   - Request frames hold the memory pool (memory_pool.go) from their first
//     byte to their response leaving, and only for the bytes that arrived
//     (readBody grows the buffer); a connection that cannot reserve waits
//     without reading. Every byte a connection reserved is released when
//     the connection ends, whatever state its requests were in.
//   - While the pool is exhausted, connections whose frame or write made
//     no progress for StallGrace are closed (chooseStalled).
//   - At most QueuedMaxRequests requests are being handled (Handle) at
//     once, broker-wide.
//   - Connections over a quota (conn_quotas.go) are closed as soon as they
//     are accepted; an accept failure for lack of descriptors or memory
//     only pauses the listener.
//   - ApiVersions responses always use response header v0; other flexible
//     responses use header v1 (an empty tag buffer).
//   - Request frames are only reused for FrameRecycler APIs, after the
//     response left: decoded bodies alias them.
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
// flag, and is never held while calling out. Server.connMu guards the set
// of connections (read when the pool needs relief); memoryPool.mu and
// connQuotas.mu guard only their own fields. None of the three is held
// while another is taken.
package protocol
