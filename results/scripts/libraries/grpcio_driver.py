"""grpcio (gRPC's C-core) calling herdsim serve's /herdsim.Herdsim/Call with
the retry policy and retry throttling of a service config, passed as the
channel's `grpc.service_config` option: the library's own retries."""

import threading
import time
import uuid

import grpc

import open_loop


def main():
    args = open_loop.arguments(__doc__).parse_args()
    with open(args.config) as f:
        service_config = f.read()
    channel = grpc.insecure_channel(
        f"127.0.0.1:{args.port}",
        options=[("grpc.service_config", service_config), ("grpc.enable_retries", 1)],
    )
    grpc.channel_ready_future(channel).result(timeout=10)
    call = channel.unary_unary("/herdsim.Herdsim/Call")
    rows, lock, pending = [], threading.Lock(), []
    start = time.perf_counter()

    def record(call_id, sent):
        def done(future):
            end = time.perf_counter() - start
            code = future.code()
            outcome = "success" if code == grpc.StatusCode.OK else code.name.lower()
            with lock:
                rows.append((call_id, sent, end, outcome))
        return done

    for at in open_loop.schedule(args.rate, args.duration, args.seed):
        open_loop.pace(start, at)
        call_id = uuid.uuid4().hex
        sent = time.perf_counter() - start
        future = call.future(b"herdsim", metadata=(("x-call-id", call_id),))
        future.add_done_callback(record(call_id, sent))
        pending.append(future)
    give_up = time.perf_counter() + 30
    for future in pending:
        try:
            future.exception(timeout=max(0.0, give_up - time.perf_counter()))
        except grpc.FutureTimeoutError:
            future.cancel()
    time.sleep(0.2)
    channel.close()
    open_loop.write_record(args.out, rows)
    print(f"grpcio {grpc.__version__}: {len(pending)} calls, {len(rows)} ended")


if __name__ == "__main__":
    main()
