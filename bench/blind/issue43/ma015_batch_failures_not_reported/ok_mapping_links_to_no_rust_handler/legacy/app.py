# Legacy notifier kept in Python; it handles whole batches and never returns batchItemFailures.
def handler(event, context):
    for record in event["Records"]:
        print(record["messageId"])
    return None
