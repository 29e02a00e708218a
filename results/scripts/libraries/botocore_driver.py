"""botocore calling herdsim serve as an AWS JSON service (SSM's
GetParameter, endpoint_url pointing at serve, dummy credentials), with the
retry_mode and max_attempts of the AWS config file it is given
(AWS_CONFIG_FILE, --profile): the library's own retries, quota and (in
adaptive mode) client rate limiter. Each call's attempts carry the same
`amz-sdk-invocation-id` header, which serve's --trace reads."""

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import open_loop


def main():
    args = open_loop.arguments(__doc__).parse_args()
    args_timeout = float(os.environ.get("DRIVER_READ_TIMEOUT", "2"))
    os.environ["AWS_CONFIG_FILE"] = os.path.abspath(args.config)
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    import botocore
    import botocore.session
    from botocore.config import Config
    from botocore.exceptions import ClientError

    session = botocore.session.Session(profile=args.profile)
    client = session.create_client(
        "ssm",
        endpoint_url=f"http://127.0.0.1:{args.port}",
        aws_access_key_id="herdsim",
        aws_secret_access_key="herdsim",
        # the read timeout is not an AWS config file setting: the runner
        # gives the prediction the same one (--timeout)
        config=Config(read_timeout=args_timeout, connect_timeout=2, max_pool_connections=100),
    )
    rows, lock = [], threading.Lock()
    start = time.perf_counter()

    def one_call(sent):
        outcome, call_id = "success", ""
        try:
            client.get_parameter(Name="herdsim")
        except ClientError as e:
            outcome = str(e.response["Error"].get("Code") or "error")
        except Exception as e:  # read timeouts, refused connections
            outcome = type(e).__name__
        end = time.perf_counter() - start
        with lock:
            rows.append((call_id, sent, end, outcome))

    times = open_loop.schedule(args.rate, args.duration, args.seed)
    with ThreadPoolExecutor(max_workers=100) as pool:
        for at in times:
            open_loop.pace(start, at)
            pool.submit(one_call, time.perf_counter() - start)
    open_loop.write_record(args.out, rows)
    print(f"botocore {botocore.__version__} ({args.profile}): {len(times)} calls, {len(rows)} ended")


if __name__ == "__main__":
    sys.exit(main())
