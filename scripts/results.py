"""Where a measurement's result goes: a JSON file under results/, and its table on stdout."""
import json
import os


def write_result(out_dir, name, result, markdown):
    """``result`` as OUT_DIR/NAME (JSON), then ``markdown(result)`` printed."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, name), 'w') as f:
        json.dump(result, f, indent=1)
    print(markdown(result))
