// The built-in catalog, kept as data in the admin file format so that a value
// can be corrected by an override file without a rebuild. Source: GPU-FACTS.md.
#include "gpu/catalog_default.h"

namespace septa::gpu {

// Geometry shared by every 8-slice MIG GPU (A100, H100, H200, B200):
// 1g {0..6}:1, 1g+me {0..6}:1, 1g double memory {0,2,4,6}:2, 2g {0,2,4}:2,
// 3g {0,4}:4, 4g {0}:4, 7g {0}:8.
const char* const kDefaultCatalogYaml = R"yaml(
models:
  - name: A100-40GB
    family: ampere
    products: ["NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-PCIE-40GB", "NVIDIA-A100-40GB*"]
    pci_device_ids: ["0x20B010DE", "0x20F110DE"]
    memory_mib: 40960
    sms: 108
    mig: {memory_slices: 8, compute_slices: 7}
    balanced: [1g.5gb, 1g.5gb, 2g.10gb, 3g.20gb]
    unconfirmed: [balanced]
    profiles:
      - {name: 1g.5gb,    id: 19, compute: 1, slices: 1, memory_gib: 4.75,  sms: 14, max: 7, starts: [0, 1, 2, 3, 4, 5, 6]}
      - {name: 1g.5gb+me, id: 20, compute: 1, slices: 1, memory_gib: 4.75,  sms: 14, max: 1, starts: [0, 1, 2, 3, 4, 5, 6], me: true}
      - {name: 1g.10gb,   id: 15, compute: 1, slices: 2, memory_gib: 9.62,  sms: 14, max: 4, starts: [0, 2, 4, 6]}
      - {name: 2g.10gb,   id: 14, compute: 2, slices: 2, memory_gib: 9.62,  sms: 28, max: 3, starts: [0, 2, 4]}
      - {name: 3g.20gb,   id: 9,  compute: 3, slices: 4, memory_gib: 19.50, sms: 42, max: 2, starts: [0, 4]}
      - {name: 4g.20gb,   id: 5,  compute: 4, slices: 4, memory_gib: 19.50, sms: 56, max: 1, starts: [0]}
      - {name: 7g.40gb,   id: 0,  compute: 7, slices: 8, memory_gib: 39.25, sms: 98, max: 1, starts: [0]}
  - name: A100-80GB
    family: ampere
    products: ["NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-80GB-PCIe", "NVIDIA-A100-80GB*"]
    pci_device_ids: ["0x20B210DE", "0x20B510DE"]
    memory_mib: 81920
    sms: 108
    mig: {memory_slices: 8, compute_slices: 7}
    balanced: [1g.10gb, 1g.10gb, 2g.20gb, 3g.40gb]
    unconfirmed: [pci_device_ids]
    profiles:
      - {name: 1g.10gb,    id: 19, compute: 1, slices: 1, memory_gib: 9.50,  sms: 14, max: 7, starts: [0, 1, 2, 3, 4, 5, 6], unconfirmed: [id, sms, memory_gib]}
      - {name: 1g.10gb+me, id: 20, compute: 1, slices: 1, memory_gib: 9.50,  sms: 14, max: 1, starts: [0, 1, 2, 3, 4, 5, 6], me: true, unconfirmed: [id, sms, memory_gib]}
      - {name: 1g.20gb,    id: 15, compute: 1, slices: 2, memory_gib: 19.50, sms: 14, max: 4, starts: [0, 2, 4, 6], unconfirmed: [id, sms, memory_gib]}
      - {name: 2g.20gb,    id: 14, compute: 2, slices: 2, memory_gib: 19.50, sms: 28, max: 3, starts: [0, 2, 4], unconfirmed: [id, sms, memory_gib]}
      - {name: 3g.40gb,    id: 9,  compute: 3, slices: 4, memory_gib: 39.25, sms: 42, max: 2, starts: [0, 4], unconfirmed: [id, sms, memory_gib]}
      - {name: 4g.40gb,    id: 5,  compute: 4, slices: 4, memory_gib: 39.25, sms: 56, max: 1, starts: [0], unconfirmed: [id, sms, memory_gib]}
      - {name: 7g.80gb,    id: 0,  compute: 7, slices: 8, memory_gib: 79.25, sms: 98, max: 1, starts: [0], unconfirmed: [id, sms, memory_gib]}
  - name: H100-80GB
    family: hopper
    products: ["NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-SXM5-80GB", "NVIDIA-H100-PCIe", "NVIDIA-H100-80GB*"]
    pci_device_ids: ["0x233010DE", "0x233110DE"]
    memory_mib: 81920
    sms: 132
    mig: {memory_slices: 8, compute_slices: 7}
    balanced: [1g.10gb, 1g.10gb, 2g.20gb, 3g.40gb]
    unconfirmed: [pcie_sms]
    profiles:
      - {name: 1g.10gb,    id: 19, compute: 1, slices: 1, memory_gib: 9.75,  sms: 16,  max: 7, starts: [0, 1, 2, 3, 4, 5, 6]}
      - {name: 1g.10gb+me, id: 20, compute: 1, slices: 1, memory_gib: 9.75,  sms: 16,  max: 1, starts: [0, 1, 2, 3, 4, 5, 6], me: true}
      - {name: 1g.20gb,    id: 15, compute: 1, slices: 2, memory_gib: 19.62, sms: 26,  max: 4, starts: [0, 2, 4, 6]}
      - {name: 2g.20gb,    id: 14, compute: 2, slices: 2, memory_gib: 19.62, sms: 32,  max: 3, starts: [0, 2, 4]}
      - {name: 3g.40gb,    id: 9,  compute: 3, slices: 4, memory_gib: 39.50, sms: 60,  max: 2, starts: [0, 4]}
      - {name: 4g.40gb,    id: 5,  compute: 4, slices: 4, memory_gib: 39.50, sms: 64,  max: 1, starts: [0]}
      - {name: 7g.80gb,    id: 0,  compute: 7, slices: 8, memory_gib: 79.25, sms: 132, max: 1, starts: [0]}
  - name: H100-94GB
    family: hopper
    products: ["NVIDIA-H100-NVL", "NVIDIA-H100-94GB*"]
    pci_device_ids: ["0x232110DE"]
    memory_mib: 96256
    sms: 132
    mig: {memory_slices: 8, compute_slices: 7}
    balanced: [1g.12gb, 1g.12gb, 2g.24gb, 3g.47gb]
    unconfirmed: [pci_device_ids]
    profiles:
      - {name: 1g.12gb,    id: 19, compute: 1, slices: 1, memory_gib: 11.50, sms: 16,  max: 7, starts: [0, 1, 2, 3, 4, 5, 6], unconfirmed: [id, sms, memory_gib]}
      - {name: 1g.12gb+me, id: 20, compute: 1, slices: 1, memory_gib: 11.50, sms: 16,  max: 1, starts: [0, 1, 2, 3, 4, 5, 6], me: true, unconfirmed: [id, sms, memory_gib]}
      - {name: 1g.24gb,    id: 15, compute: 1, slices: 2, memory_gib: 23.00, sms: 26,  max: 4, starts: [0, 2, 4, 6], unconfirmed: [id, sms, memory_gib]}
      - {name: 2g.24gb,    id: 14, compute: 2, slices: 2, memory_gib: 23.00, sms: 32,  max: 3, starts: [0, 2, 4], unconfirmed: [id, sms, memory_gib]}
      - {name: 3g.47gb,    id: 9,  compute: 3, slices: 4, memory_gib: 46.38, sms: 60,  max: 2, starts: [0, 4], unconfirmed: [id, sms, memory_gib]}
      - {name: 4g.47gb,    id: 5,  compute: 4, slices: 4, memory_gib: 46.38, sms: 64,  max: 1, starts: [0]}
      - {name: 7g.94gb,    id: 0,  compute: 7, slices: 8, memory_gib: 93.12, sms: 132, max: 1, starts: [0]}
  - name: H100-96GB
    family: hopper
    products: ["NVIDIA-GH200-480GB", "NVIDIA-GH200*", "NVIDIA-H100-96GB*"]
    pci_device_ids: ["0x234210DE"]
    memory_mib: 98304
    sms: 132
    mig: {memory_slices: 8, compute_slices: 7}
    balanced: [1g.12gb, 1g.12gb, 2g.24gb, 3g.48gb]
    unconfirmed: [pci_device_ids, balanced]
    profiles:
      - {name: 1g.12gb,    id: 19, compute: 1, slices: 1, memory_gib: 11.75, sms: 16,  max: 7, starts: [0, 1, 2, 3, 4, 5, 6], unconfirmed: [id, sms, memory_gib]}
      - {name: 1g.12gb+me, id: 20, compute: 1, slices: 1, memory_gib: 11.75, sms: 16,  max: 1, starts: [0, 1, 2, 3, 4, 5, 6], me: true, unconfirmed: [id, sms, memory_gib]}
      - {name: 1g.24gb,    id: 15, compute: 1, slices: 2, memory_gib: 23.62, sms: 26,  max: 4, starts: [0, 2, 4, 6], unconfirmed: [id, sms, memory_gib]}
      - {name: 2g.24gb,    id: 14, compute: 2, slices: 2, memory_gib: 23.62, sms: 32,  max: 3, starts: [0, 2, 4], unconfirmed: [id, sms, memory_gib]}
      - {name: 3g.48gb,    id: 9,  compute: 3, slices: 4, memory_gib: 47.50, sms: 60,  max: 2, starts: [0, 4], unconfirmed: [id, sms, memory_gib]}
      - {name: 4g.48gb,    id: 5,  compute: 4, slices: 4, memory_gib: 47.50, sms: 64,  max: 1, starts: [0], unconfirmed: [id, sms, memory_gib]}
      - {name: 7g.96gb,    id: 0,  compute: 7, slices: 8, memory_gib: 95.00, sms: 132, max: 1, starts: [0], unconfirmed: [id, sms, memory_gib]}
  - name: H200-141GB
    family: hopper
    products: ["NVIDIA-H200", "NVIDIA-H200-141GB*", "NVIDIA-H200-NVL"]
    pci_device_ids: ["0x233510DE"]
    memory_mib: 144384
    sms: 132
    mig: {memory_slices: 8, compute_slices: 7}
    balanced: [1g.18gb, 1g.18gb, 2g.35gb, 3g.71gb]
    unconfirmed: [pci_device_ids]
    profiles:
      - {name: 1g.18gb,    id: 19, compute: 1, slices: 1, memory_gib: 16.75,  sms: 16,  max: 7, starts: [0, 1, 2, 3, 4, 5, 6], unconfirmed: [id, sms, memory_gib]}
      - {name: 1g.18gb+me, id: 20, compute: 1, slices: 1, memory_gib: 16.75,  sms: 16,  max: 1, starts: [0, 1, 2, 3, 4, 5, 6], me: true, unconfirmed: [id, sms, memory_gib]}
      - {name: 1g.35gb,    id: 15, compute: 1, slices: 2, memory_gib: 32.50,  sms: 26,  max: 4, starts: [0, 2, 4, 6], unconfirmed: [id, sms, memory_gib]}
      - {name: 2g.35gb,    id: 14, compute: 2, slices: 2, memory_gib: 32.50,  sms: 32,  max: 3, starts: [0, 2, 4], unconfirmed: [id, sms, memory_gib]}
      - {name: 3g.71gb,    id: 9,  compute: 3, slices: 4, memory_gib: 66.50,  sms: 60,  max: 2, starts: [0, 4], unconfirmed: [id, sms, memory_gib]}
      - {name: 4g.71gb,    id: 5,  compute: 4, slices: 4, memory_gib: 66.50,  sms: 64,  max: 1, starts: [0], unconfirmed: [id, sms, memory_gib]}
      - {name: 7g.141gb,   id: 0,  compute: 7, slices: 8, memory_gib: 140.00, sms: 132, max: 1, starts: [0], unconfirmed: [id, sms, memory_gib]}
  - name: B200-180GB
    family: blackwell
    products: ["NVIDIA-B200", "NVIDIA-B200-180GB*"]
    pci_device_ids: ["0x290110DE"]
    memory_mib: 184320
    sms: 148
    mig: {memory_slices: 8, compute_slices: 7}
    balanced: [1g.23gb, 1g.23gb, 2g.45gb, 3g.90gb]
    unconfirmed: [pci_device_ids, sms, placements]
    profiles:
      - {name: 1g.23gb,    id: 19, compute: 1, slices: 1, memory_gib: 22.50,  sms: 18,  max: 7, starts: [0, 1, 2, 3, 4, 5, 6], unconfirmed: [id, sms, memory_gib, starts]}
      - {name: 1g.23gb+me, id: 20, compute: 1, slices: 1, memory_gib: 22.50,  sms: 18,  max: 1, starts: [0, 1, 2, 3, 4, 5, 6], me: true, unconfirmed: [id, sms, memory_gib, starts]}
      - {name: 1g.45gb,    id: 15, compute: 1, slices: 2, memory_gib: 44.50,  sms: 18,  max: 4, starts: [0, 2, 4, 6], unconfirmed: [id, sms, memory_gib, starts]}
      - {name: 2g.45gb,    id: 14, compute: 2, slices: 2, memory_gib: 44.50,  sms: 36,  max: 3, starts: [0, 2, 4], unconfirmed: [id, sms, memory_gib, starts]}
      - {name: 3g.90gb,    id: 9,  compute: 3, slices: 4, memory_gib: 89.50,  sms: 60,  max: 2, starts: [0, 4], unconfirmed: [id, sms, memory_gib, starts]}
      - {name: 4g.90gb,    id: 5,  compute: 4, slices: 4, memory_gib: 89.50,  sms: 72,  max: 1, starts: [0], unconfirmed: [id, sms, memory_gib, starts]}
      - {name: 7g.180gb,   id: 0,  compute: 7, slices: 8, memory_gib: 178.00, sms: 144, max: 1, starts: [0], unconfirmed: [id, sms, memory_gib, starts]}
  - name: A30-24GB
    family: ampere
    products: ["NVIDIA-A30", "NVIDIA-A30-24GB*"]
    pci_device_ids: ["0x20B710DE"]
    memory_mib: 24576
    sms: 56
    mig: {memory_slices: 4, compute_slices: 4}
    balanced: [1g.6gb, 1g.6gb, 2g.12gb]
    unconfirmed: [pci_device_ids]
    profiles:
      - {name: 1g.6gb,    id: 14, compute: 1, slices: 1, memory_gib: 5.81,  sms: 14, max: 4, starts: [0, 1, 2, 3]}
      - {name: 1g.6gb+me, id: 21, compute: 1, slices: 1, memory_gib: 5.81,  sms: 14, max: 1, starts: [0, 1, 2, 3], me: true}
      - {name: 2g.12gb,   id: 5,  compute: 2, slices: 2, memory_gib: 11.69, sms: 28, max: 2, starts: [0, 2]}
      - {name: 4g.24gb,   id: 0,  compute: 4, slices: 4, memory_gib: 23.50, sms: 56, max: 1, starts: [0]}
  - {name: T4, family: turing, products: ["Tesla-T4", "NVIDIA-T4*"], memory_mib: 15360, sms: 40}
  - {name: P100, family: pascal, products: ["Tesla-P100*"], memory_mib: 16384, sms: 56}
  - {name: V100M16, family: volta, products: ["Tesla-V100-*16GB*"], memory_mib: 16384, sms: 80}
  - {name: V100M32, family: volta, products: ["Tesla-V100-*32GB*"], memory_mib: 32768, sms: 80}
  - {name: A10, family: ampere, products: ["NVIDIA-A10", "NVIDIA-A10-24GB*"], memory_mib: 24576, sms: 72}
  - {name: L4, family: ada-lovelace, products: ["NVIDIA-L4"], memory_mib: 23034, sms: 58}
  - {name: L40S, family: ada-lovelace, products: ["NVIDIA-L40S"], memory_mib: 46068, sms: 142}
  # G2 and G3 are the openb trace's undisclosed models: plausible placeholders.
  - {name: G2, family: undisclosed, products: ["G2"], memory_mib: 16384, sms: 80, unconfirmed: [memory_mib, sms, family]}
  - {name: G3, family: undisclosed, products: ["G3"], memory_mib: 32768, sms: 80, unconfirmed: [memory_mib, sms, family]}
)yaml";

}  // namespace septa::gpu
