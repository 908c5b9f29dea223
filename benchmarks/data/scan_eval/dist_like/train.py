import deepspeed
import torch
import torch.distributed as dist
from flash_attn import flash_attn_func


def main() -> None:
    dist.init_process_group("nccl")
    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
    model = torch.nn.Linear(8, 8).cuda()
    engine, _, _, _ = deepspeed.initialize(model=model, config="ds.json")
    q = torch.randn(1, 8, 4, 16, device="cuda", dtype=torch.bfloat16)
    out = flash_attn_func(q, q, q)
    print(out.shape, engine)


if __name__ == "__main__":
    main()
