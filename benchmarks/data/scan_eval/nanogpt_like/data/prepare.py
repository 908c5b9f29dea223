import os

import numpy as np
import requests

input_file_path = os.path.join(os.path.dirname(__file__), "input.txt")
if not os.path.exists(input_file_path):
    data_url = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
    with open(input_file_path, "w") as f:
        f.write(requests.get(data_url).text)
with open(input_file_path, "rb") as fh:
    ids = np.frombuffer(fh.read(), dtype=np.uint8).astype(np.uint16)
ids.tofile(os.path.join(os.path.dirname(__file__), "train.bin"))
