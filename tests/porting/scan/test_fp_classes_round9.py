"""A class read on round 9's repositories after their first score: a U-Net's skip concatenation in a loop over a
ModuleDict (EDM)."""

from __future__ import annotations

from accelpilot.porting.scan import scan_python

UNET = """\
import torch

class UNet(torch.nn.Module):
    def forward(self, x, emb):
        skips = []
        for name, block in self.enc.items():
            x = block(x)
            skips.append(x)
        for name, block in self.dec.items():
            x = torch.cat([x, skips.pop()], dim=1)
            x = block(x, emb)
        return x

def decode(model, seq, n):
    for _ in range(n):
        seq = torch.cat([seq, model(seq)], dim=1)
    return seq
"""


def test_a_skip_concatenation_over_a_module_dict_is_no_growing_sequence() -> None:
    """EDM's decoder loops over ``self.dec.items()``, a count the module fixes: the concat has one shape per block.
    Near miss: a decode loop over ``range(n)`` grows its sequence."""
    found = [ln for r, ln, *_ in scan_python(UNET) if r == "growing-sequence"]
    assert found == [16]
