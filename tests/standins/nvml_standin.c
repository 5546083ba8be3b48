/*
 * A stand-in libnvidia-ml.so.1 for tests on machines without an NVIDIA driver.
 *
 * It exports the NVML entry points that NVIDIA's nvidia-ml-py binding (module pynvml) calls for gpuvet's probe, with
 * the C signatures of nvml.h, and answers from environment variables so that one build serves every scenario:
 *
 *   FAKE_NVML_INIT      nvmlReturn_t of nvmlInit (0 ok; 18 NVML_ERROR_LIB_RM_VERSION_MISMATCH; 9 driver not loaded)
 *   FAKE_NVML_DRIVER    driver version string              (default "535.104.05")
 *   FAKE_NVML_CUDA      CUDA driver version as an integer  (default 12020 -> "12.2")
 *   FAKE_NVML_COUNT     number of GPUs                     (default 1)
 *   FAKE_NVML_NAME      device name                        (default "NVIDIA H100 80GB HBM3")
 *   FAKE_NVML_CC        compute capability major*10+minor  (default 90)
 *   FAKE_NVML_MEM_MIB   total memory in MiB                (default 81559)
 *   FAKE_NVML_PCIE      "gen_cur,gen_max,width_cur,width_max" (default "5,5,16,16")
 *   FAKE_NVML_MIG       "cur,pending" or "unsupported"     (default "0,0")
 *   FAKE_NVML_VIRT      nvmlGpuVirtualizationMode_t        (default 0)
 *   FAKE_NVML_REASONS   clocks event reasons bitmask       (default 0)
 *   FAKE_NVML_UTIL      "gpu,memory" utilization percent   (default "0,0")
 *   FAKE_NVML_UTIL_PERIOD_MS  when set, utilization is a square wave of this period: FAKE_NVML_UTIL during the
 *                       first half, 2 % during the second (a training step: busy, then waiting for the others)
 *   FAKE_NVML_UTIL_SHIFT_MS   "1:250,3:100": device 1's wave starts 250 ms late, device 3's 100 ms late
 *   FAKE_NVML_UTIL_SCALE      "1:40": device 1 reaches 40 % of FAKE_NVML_UTIL when busy
 *   FAKE_NVML_UTIL_HANG       1: nvmlDeviceGetUtilizationRates never returns (a wedged GPU)
 *
 * Functions it does not export make the binding raise NVMLError_FunctionNotFound, which the probe must tolerate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

static const char *env_or(const char *name, const char *fallback) {
    const char *value = getenv(name);
    return value && *value ? value : fallback;
}
static int env_int(const char *name, int fallback) {
    const char *value = getenv(name);
    return value && *value ? atoi(value) : fallback;
}
static unsigned device_index(nvmlDevice_t device) { return (unsigned)((size_t)device - 1); }
static int valid(nvmlDevice_t device) { return device && device_index(device) < (unsigned)env_int("FAKE_NVML_COUNT", 1); }
static void copy_text(char *out, unsigned length, const char *text) { snprintf(out, length, "%s", text); }

nvmlReturn_t nvmlInit_v2(void) { return env_int("FAKE_NVML_INIT", 0); }
nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return nvmlInit_v2(); }
nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }

const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case 0: return "Success";
    case 3: return "Not Supported";
    case 9: return "Driver Not Loaded";
    case 18: return "RM has detected an NVML/RM version mismatch.";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    copy_text(version, length, env_or("FAKE_NVML_DRIVER", "535.104.05"));
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *version) { *version = env_int("FAKE_NVML_CUDA", 12020); return NVML_SUCCESS; }
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version) { return nvmlSystemGetCudaDriverVersion(version); }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) { *count = (unsigned)env_int("FAKE_NVML_COUNT", 1); return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (index >= (unsigned)env_int("FAKE_NVML_COUNT", 1)) return NVML_ERROR_INVALID_ARGUMENT;
    *device = (nvmlDevice_t)(size_t)(index + 1);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    copy_text(name, length, env_or("FAKE_NVML_NAME", "NVIDIA H100 80GB HBM3"));
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    snprintf(uuid, length, "GPU-%08x-1111-2222-3333-444444444444", device_index(device));
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor) {
    int cc = env_int("FAKE_NVML_CC", 90);
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    *major = cc / 10; *minor = cc % 10;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory) {
    unsigned long long total = (unsigned long long)env_int("FAKE_NVML_MEM_MIB", 81559) * 1024ULL * 1024ULL;
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    memory->total = total; memory->used = 1024ULL * 1024ULL; memory->free = total - memory->used;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) {
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof(*pci));
    pci->bus = 0x18 + device_index(device);
    snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", pci->bus);
    snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", pci->bus);
    return NVML_SUCCESS;
}
static nvmlReturn_t pcie_field(nvmlDevice_t device, unsigned int *out, int field) {
    unsigned values[4] = {5, 5, 16, 16};
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    sscanf(env_or("FAKE_NVML_PCIE", "5,5,16,16"), "%u,%u,%u,%u", &values[0], &values[1], &values[2], &values[3]);
    *out = values[field];
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *g) { return pcie_field(d, g, 0); }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *g) { return pcie_field(d, g, 1); }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *w) { return pcie_field(d, w, 2); }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *w) { return pcie_field(d, w, 3); }
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current, unsigned int *pending) {
    const char *mig = env_or("FAKE_NVML_MIG", "0,0");
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    if (strcmp(mig, "unsupported") == 0) return NVML_ERROR_NOT_SUPPORTED;
    if (sscanf(mig, "%u,%u", current, pending) != 2) return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t device, int *mode) {
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = env_int("FAKE_NVML_VIRT", 0);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, int *mode) {
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = 1;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit) {
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    *limit = 700000;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int *limit) {
    return nvmlDeviceGetPowerManagementLimit(device, limit);
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *temperature) {
    (void)sensor;
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    *temperature = 35;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons) {
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    *reasons = (unsigned long long)env_int("FAKE_NVML_REASONS", 0);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r) {
    return nvmlDeviceGetCurrentClocksEventReasons(d, r);
}
/* ECC is "not supported" on this stand-in, as on GeForce boards. */
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, int *current, int *pending) {
    (void)device; (void)current; (void)pending;
    return NVML_ERROR_NOT_SUPPORTED;
}

/* P2P: FAKE_NVML_P2P="0-1:1,2-3:2" gives the nvmlGpuP2PStatus_t of a pair (either order); every other pair is OK. */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int caps, int *status) {
    (void)caps;
    if (!valid(a) || !valid(b)) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned x = device_index(a), y = device_index(b);
    const char *spec = env_or("FAKE_NVML_P2P", "");
    *status = 0;
    while (*spec) {
        unsigned p, q; int value, used = 0;
        if (sscanf(spec, "%u-%u:%d%n", &p, &q, &value, &used) == 3 && used > 0) {
            if ((p == x && q == y) || (p == y && q == x)) *status = value;
            spec += used;
        } else {
            break;
        }
        if (*spec == ',') spec++;
    }
    return NVML_SUCCESS;
}

/* The value a "1:250,3:100" list gives a device, or fallback. */
static int per_device(const char *name, unsigned index, int fallback) {
    const char *spec = env_or(name, "");
    while (*spec) {
        unsigned device; int value, used = 0;
        if (sscanf(spec, "%u:%d%n", &device, &value, &used) != 2 || used <= 0) break;
        if (device == index) return value;
        spec += used;
        if (*spec == ',') spec++;
    }
    return fallback;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization) {
    unsigned gpu = 0, memory = 0, index;
    int period;
    if (!valid(device)) return NVML_ERROR_INVALID_ARGUMENT;
    if (env_int("FAKE_NVML_UTIL_HANG", 0)) for (;;) pause();
    index = device_index(device);
    sscanf(env_or("FAKE_NVML_UTIL", "0,0"), "%u,%u", &gpu, &memory);
    period = env_int("FAKE_NVML_UTIL_PERIOD_MS", 0);
    if (period > 0) {
        struct timespec now;
        long long ms, phase;
        clock_gettime(CLOCK_REALTIME, &now);  /* one clock for every process that loads the stand-in */
        ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 - per_device("FAKE_NVML_UTIL_SHIFT_MS", index, 0);
        phase = ((ms % period) + period) % period;
        if (phase >= period / 2) { gpu = 2; memory = 1; }
    }
    utilization->gpu = gpu * (unsigned)per_device("FAKE_NVML_UTIL_SCALE", index, 100) / 100;
    utilization->memory = memory * (unsigned)per_device("FAKE_NVML_UTIL_SCALE", index, 100) / 100;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device) {
    unsigned index;
    if (sscanf(uuid, "GPU-%08x-", &index) != 1 || index >= (unsigned)env_int("FAKE_NVML_COUNT", 1))
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = (nvmlDevice_t)(size_t)(index + 1);
    return NVML_SUCCESS;
}
