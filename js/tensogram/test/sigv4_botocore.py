#!/usr/bin/python3
"""Signs requests with botocore's SigV4Auth / S3SigV4Auth for test/auth.test.ts.

Reads a JSON list of requests on stdin, writes the list of Authorization header
values on stdout. Each request: method, url (sent as is), headers ([[name,
value], ...]), timestamp (YYYYmmddTHHMMSSZ), credentials (accessKeyId,
secretAccessKey, sessionToken?, region, service) and, for S3, unsignedPayload
(true: x-amz-content-sha256 is UNSIGNED-PAYLOAD, false: the hash of the empty
body). Exit status 3 when botocore is not installed.
"""
import datetime
import json
import sys
import types

try:
    import botocore.auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
except ImportError:
    sys.exit(3)


def sign(req):
    creds = req["credentials"]
    fixed = datetime.datetime.strptime(req["timestamp"], "%Y%m%dT%H%M%SZ")

    class FixedDateTime(datetime.datetime):
        @classmethod
        def utcnow(cls):
            return fixed

    # botocore signs at the current time: pin it to the test's time (older releases call
    # datetime.datetime.utcnow(), newer ones botocore.compat.get_current_datetime()).
    botocore.auth.datetime = types.SimpleNamespace(datetime=FixedDateTime)
    if hasattr(botocore.auth, "get_current_datetime"):
        botocore.auth.get_current_datetime = lambda *args, **kwargs: fixed
    credentials = Credentials(creds["accessKeyId"], creds["secretAccessKey"], creds.get("sessionToken"))
    service = creds.get("service", "s3")
    request = AWSRequest(method=req["method"], url=req["url"], headers=dict(req["headers"]), data=b"")
    if service == "s3":
        signing_enabled = not req.get("unsignedPayload", False)
        request.context["client_config"] = types.SimpleNamespace(s3={"payload_signing_enabled": signing_enabled})
        signer = botocore.auth.S3SigV4Auth(credentials, service, creds["region"])
    else:
        signer = botocore.auth.SigV4Auth(credentials, service, creds["region"])
    signer.add_auth(request)
    return request.headers["Authorization"]


json.dump([sign(r) for r in json.load(sys.stdin)], sys.stdout)
