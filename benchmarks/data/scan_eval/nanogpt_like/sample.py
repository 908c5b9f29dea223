import torch
from model import GPT

device = "cuda"
model = GPT()
model.load_state_dict(torch.load("ckpt.pt", map_location=device))
model.eval()
model.to(device)
x = torch.zeros((1, 1), dtype=torch.long, device=device)
with torch.no_grad():
    y = model.generate(x, 100)
print(y[0].tolist())
