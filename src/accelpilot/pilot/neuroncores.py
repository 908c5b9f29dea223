"""NeuronCores per Neuron chip, without torch: the pilot's rank count and the launch's processes per node."""

from __future__ import annotations

# NeuronCores per chip (AWS Neuron docs, about-neuron/arch/neuron-hardware, 2026-08 snapshot) and the logical
# NeuronCore size (LNC) the runtime groups them by default: Trainium2 and 3 show 4 logical cores of 2 at LNC=2.
NEURON_CORES_PER_CHIP = {"Trainium": 2, "Inferentia2": 2, "Trainium2": 8, "Trainium3": 8}
NEURON_DEFAULT_LNC = {"Trainium2": 2, "Trainium3": 2}


def ranks_per_chip(accelerator: str, lnc_env: str = "") -> tuple[int, int, int] | None:
    """(NeuronCores per chip, LNC, ranks per chip) for a known chip; ``lnc_env`` is NEURON_LOGICAL_NC_CONFIG."""
    if accelerator not in NEURON_CORES_PER_CHIP:
        return None
    cores = NEURON_CORES_PER_CHIP[accelerator]
    lnc = int(lnc_env) if lnc_env in ("1", "2") else NEURON_DEFAULT_LNC.get(accelerator, 1)
    return cores, lnc, max(1, cores // lnc)
