"""Where a measurement's result goes: a JSON file under results/, and its table on
stdout; and the machine it was measured on."""
import json
import os
import platform


def write_result(out_dir, name, result, markdown):
    """``result`` as OUT_DIR/NAME (JSON), then ``markdown(result)`` printed."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, name), 'w') as f:
        json.dump(result, f, indent=1)
    print(markdown(result))


def write_result_file(path, result, markdown):
    """write_result to the file ``path``, then where it went printed."""
    write_result(os.path.dirname(path) or '.', os.path.basename(path), result, markdown)
    print('written to %s' % path)


def machine():
    """What a result records of the machine it was measured on."""
    return {'python': platform.python_version(), 'implementation': platform.python_implementation(),
            'cpu_count': os.cpu_count(), 'machine': platform.machine(), 'system': platform.platform(),
            'processor': _cpu_model()}


def _cpu_model():
    try:
        with open('/proc/cpuinfo') as info:
            for line in info:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None
