"""Vocabulary coverage of `gpuvet diagnose` (issue 5): every entry of the error vocabularies users meet (CUDA runtime
and driver API error codes, NCCL results and WARN lines, cuDNN/cuBLAS statuses, NVML return codes, Xid numbers, the
dynamic loader's missing CUDA libraries) maps to the docs/CONTRACT.md §4 code it most often means.

Table-driven: one row per vocabulary entry, framed the way a framework prints it. Entries with no single cause are
listed with the reason, and must not get a confident answer (gpuvet says "unknown", it never guesses).

The CUDA tables are the real ones: the strings come from libcudart.so.13 (cudaGetErrorName/cudaGetErrorString) and
the names/numbers from driver_types.h and cuda.h of the CUDA 13.0 toolkit on this machine; a test re-reads them from
the real library and headers so the table cannot drift from what CUDA prints.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest

from gpuvet.diagnose.engine import diagnose_text

CUDA_HOME = Path("/usr/local/cuda-13.0")
UNDECIDED_MAX_CONFIDENCE = 0.5

# (number, cudaGetErrorName, cudaGetErrorString, code it most often means; None: see UNDECIDED_CUDA_ERRORS)
CUDART_ERRORS = [
    (1, 'cudaErrorInvalidValue', 'invalid argument', 'not_a_stack_problem'),
    (2, 'cudaErrorMemoryAllocation', 'out of memory', 'insufficient_vram'),
    (3, 'cudaErrorInitializationError', 'initialization error', 'no_driver'),
    (4, 'cudaErrorCudartUnloading', 'driver shutting down', 'not_a_stack_problem'),
    (5, 'cudaErrorProfilerDisabled', 'profiler disabled while using external profiling tool', 'not_a_stack_problem'),
    (6, 'cudaErrorProfilerNotInitialized', 'profiler not initialized: call cudaProfilerInitialize()', 'not_a_stack_problem'),
    (7, 'cudaErrorProfilerAlreadyStarted', 'profiler already started', 'not_a_stack_problem'),
    (8, 'cudaErrorProfilerAlreadyStopped', 'profiler already stopped', 'not_a_stack_problem'),
    (9, 'cudaErrorInvalidConfiguration', 'invalid configuration argument', 'not_a_stack_problem'),
    (12, 'cudaErrorInvalidPitchValue', 'invalid pitch argument', 'not_a_stack_problem'),
    (13, 'cudaErrorInvalidSymbol', 'invalid device symbol', 'not_a_stack_problem'),
    (16, 'cudaErrorInvalidHostPointer', 'invalid host pointer', 'not_a_stack_problem'),
    (17, 'cudaErrorInvalidDevicePointer', 'invalid device pointer', 'not_a_stack_problem'),
    (18, 'cudaErrorInvalidTexture', 'invalid texture reference', 'not_a_stack_problem'),
    (19, 'cudaErrorInvalidTextureBinding', 'texture is not bound to a pointer', 'not_a_stack_problem'),
    (20, 'cudaErrorInvalidChannelDescriptor', 'invalid channel descriptor', 'not_a_stack_problem'),
    (21, 'cudaErrorInvalidMemcpyDirection', 'invalid copy direction for memcpy', 'not_a_stack_problem'),
    (22, 'cudaErrorAddressOfConstant', 'invalid address of constant', 'not_a_stack_problem'),
    (23, 'cudaErrorTextureFetchFailed', 'fetch from texture failed', 'not_a_stack_problem'),
    (24, 'cudaErrorTextureNotBound', 'cannot fetch from a texture that is not bound', 'not_a_stack_problem'),
    (25, 'cudaErrorSynchronizationError', 'incorrect use of __syncthreads()', 'not_a_stack_problem'),
    (26, 'cudaErrorInvalidFilterSetting', 'linear filtering not supported for non-float type', 'not_a_stack_problem'),
    (27, 'cudaErrorInvalidNormSetting', 'read as normalized float not supported for data type', 'not_a_stack_problem'),
    (28, 'cudaErrorMixedDeviceExecution', 'device emulation mode and device execution mode cannot be mixed', 'not_a_stack_problem'),
    (31, 'cudaErrorNotYetImplemented', 'feature not yet implemented', 'not_a_stack_problem'),
    (32, 'cudaErrorMemoryValueTooLarge', 'memory size or pointer value too large to fit in 32 bit', 'not_a_stack_problem'),
    (34, 'cudaErrorStubLibrary', 'CUDA driver is a stub library', 'cuda_library_missing'),
    (35, 'cudaErrorInsufficientDriver', 'CUDA driver version is insufficient for CUDA runtime version', 'driver_too_old'),
    (36, 'cudaErrorCallRequiresNewerDriver', 'API call is not supported in the installed CUDA driver', 'driver_too_old'),
    (37, 'cudaErrorInvalidSurface', 'invalid surface reference', 'not_a_stack_problem'),
    (43, 'cudaErrorDuplicateVariableName', 'duplicate global variable looked up by string name', 'not_a_stack_problem'),
    (44, 'cudaErrorDuplicateTextureName', 'duplicate texture looked up by string name', 'not_a_stack_problem'),
    (45, 'cudaErrorDuplicateSurfaceName', 'duplicate surface looked up by string name', 'not_a_stack_problem'),
    (46, 'cudaErrorDevicesUnavailable', 'CUDA-capable device(s) is/are busy or unavailable', 'virtualization_limit'),
    (49, 'cudaErrorIncompatibleDriverContext', 'incompatible driver context', 'not_a_stack_problem'),
    (52, 'cudaErrorMissingConfiguration', '__global__ function call is not configured', 'not_a_stack_problem'),
    (53, 'cudaErrorPriorLaunchFailure', 'unspecified launch failure in prior launch', 'not_a_stack_problem'),
    (65, 'cudaErrorLaunchMaxDepthExceeded', 'launch would exceed maximum depth of nested launches', 'not_a_stack_problem'),
    (66, 'cudaErrorLaunchFileScopedTex', 'launch failed because kernel uses unsupported, file-scoped textures (texture objects are supported)', 'not_a_stack_problem'),
    (67, 'cudaErrorLaunchFileScopedSurf', 'launch failed because kernel uses unsupported, file-scoped surfaces (surface objects are supported)', 'not_a_stack_problem'),
    (68, 'cudaErrorSyncDepthExceeded', "cudaDeviceSynchronize failed because caller's grid depth exceeds cudaLimitDevRuntimeSyncDepth", 'not_a_stack_problem'),
    (69, 'cudaErrorLaunchPendingCountExceeded', 'launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount', 'not_a_stack_problem'),
    (98, 'cudaErrorInvalidDeviceFunction', 'invalid device function', 'arch_not_in_build'),
    (100, 'cudaErrorNoDevice', 'no CUDA-capable device is detected', 'no_driver'),
    (101, 'cudaErrorInvalidDevice', 'invalid device ordinal', 'not_a_stack_problem'),
    (102, 'cudaErrorDeviceNotLicensed', "device doesn't have valid Grid license", 'virtualization_limit'),
    (103, 'cudaErrorSoftwareValidityNotEstablished', 'integrity checks failed', None),
    (127, 'cudaErrorStartupFailure', 'startup failure in cuda runtime', None),
    (200, 'cudaErrorInvalidKernelImage', 'device kernel image is invalid', 'arch_not_in_build'),
    (201, 'cudaErrorDeviceUninitialized', 'invalid device context', 'not_a_stack_problem'),
    (205, 'cudaErrorMapBufferObjectFailed', 'mapping of buffer object failed', 'not_a_stack_problem'),
    (206, 'cudaErrorUnmapBufferObjectFailed', 'unmapping of buffer object failed', 'not_a_stack_problem'),
    (207, 'cudaErrorArrayIsMapped', 'array is mapped', 'not_a_stack_problem'),
    (208, 'cudaErrorAlreadyMapped', 'resource already mapped', 'not_a_stack_problem'),
    (209, 'cudaErrorNoKernelImageForDevice', 'no kernel image is available for execution on the device', 'arch_not_in_build'),
    (210, 'cudaErrorAlreadyAcquired', 'resource already acquired', 'not_a_stack_problem'),
    (211, 'cudaErrorNotMapped', 'resource not mapped', 'not_a_stack_problem'),
    (212, 'cudaErrorNotMappedAsArray', 'resource not mapped as array', 'not_a_stack_problem'),
    (213, 'cudaErrorNotMappedAsPointer', 'resource not mapped as pointer', 'not_a_stack_problem'),
    (214, 'cudaErrorECCUncorrectable', 'uncorrectable ECC error encountered', 'health_problem'),
    (215, 'cudaErrorUnsupportedLimit', 'limit is not supported on this architecture', 'not_a_stack_problem'),
    (216, 'cudaErrorDeviceAlreadyInUse', 'exclusive-thread device already in use by a different thread', 'virtualization_limit'),
    (217, 'cudaErrorPeerAccessUnsupported', 'peer access is not supported between these two devices', 'interconnect_slow'),
    (218, 'cudaErrorInvalidPtx', 'a PTX JIT compilation failed', 'toolkit_mismatch'),
    (219, 'cudaErrorInvalidGraphicsContext', 'invalid OpenGL or DirectX context', 'not_a_stack_problem'),
    (220, 'cudaErrorNvlinkUncorrectable', 'uncorrectable NVLink error detected during the execution', 'health_problem'),
    (221, 'cudaErrorJitCompilerNotFound', 'PTX JIT compiler library not found', 'no_driver'),
    (222, 'cudaErrorUnsupportedPtxVersion', 'the provided PTX was compiled with an unsupported toolchain.', 'driver_too_old'),
    (223, 'cudaErrorJitCompilationDisabled', 'PTX JIT compilation was disabled', 'arch_not_in_build'),
    (224, 'cudaErrorUnsupportedExecAffinity', 'the provided execution affinity is not supported', 'not_a_stack_problem'),
    (225, 'cudaErrorUnsupportedDevSideSync', 'the provided PTX contains unsupported call to cudaDeviceSynchronize', 'not_a_stack_problem'),
    (226, 'cudaErrorContained', 'Invalid access of peer GPU memory over nvlink or a hardware error', 'health_problem'),
    (300, 'cudaErrorInvalidSource', 'device kernel image is invalid', 'arch_not_in_build'),
    (301, 'cudaErrorFileNotFound', 'file not found', 'not_a_stack_problem'),
    (302, 'cudaErrorSharedObjectSymbolNotFound', 'shared object symbol not found', None),
    (303, 'cudaErrorSharedObjectInitFailed', 'shared object initialization failed', None),
    (304, 'cudaErrorOperatingSystem', 'OS call failed or operation not supported on this OS', 'virtualization_limit'),
    (400, 'cudaErrorInvalidResourceHandle', 'invalid resource handle', 'not_a_stack_problem'),
    (401, 'cudaErrorIllegalState', 'the operation cannot be performed in the present state', 'not_a_stack_problem'),
    (402, 'cudaErrorLossyQuery', 'attempted introspection would be semantically lossy', 'not_a_stack_problem'),
    (500, 'cudaErrorSymbolNotFound', 'named symbol not found', None),
    (600, 'cudaErrorNotReady', 'device not ready', 'not_a_stack_problem'),
    (700, 'cudaErrorIllegalAddress', 'an illegal memory access was encountered', 'not_a_stack_problem'),
    (701, 'cudaErrorLaunchOutOfResources', 'too many resources requested for launch', 'not_a_stack_problem'),
    (702, 'cudaErrorLaunchTimeout', 'the launch timed out and was terminated', 'not_a_stack_problem'),
    (703, 'cudaErrorLaunchIncompatibleTexturing', 'launch uses incompatible texturing mode', 'not_a_stack_problem'),
    (704, 'cudaErrorPeerAccessAlreadyEnabled', 'peer access is already enabled', 'not_a_stack_problem'),
    (705, 'cudaErrorPeerAccessNotEnabled', 'peer access has not been enabled', 'not_a_stack_problem'),
    (708, 'cudaErrorSetOnActiveProcess', 'cannot set while device is active in this process', 'not_a_stack_problem'),
    (709, 'cudaErrorContextIsDestroyed', 'context is destroyed', 'not_a_stack_problem'),
    (710, 'cudaErrorAssert', 'device-side assert triggered', 'not_a_stack_problem'),
    (711, 'cudaErrorTooManyPeers', 'peer mapping resources exhausted', 'not_a_stack_problem'),
    (712, 'cudaErrorHostMemoryAlreadyRegistered', 'part or all of the requested memory range is already mapped', 'not_a_stack_problem'),
    (713, 'cudaErrorHostMemoryNotRegistered', 'pointer does not correspond to a registered memory region', 'not_a_stack_problem'),
    (714, 'cudaErrorHardwareStackError', 'hardware stack error', 'not_a_stack_problem'),
    (715, 'cudaErrorIllegalInstruction', 'an illegal instruction was encountered', 'not_a_stack_problem'),
    (716, 'cudaErrorMisalignedAddress', 'misaligned address', 'not_a_stack_problem'),
    (717, 'cudaErrorInvalidAddressSpace', 'operation not supported on global/shared address space', 'not_a_stack_problem'),
    (718, 'cudaErrorInvalidPc', 'invalid program counter', 'not_a_stack_problem'),
    (719, 'cudaErrorLaunchFailure', 'unspecified launch failure', 'not_a_stack_problem'),
    (720, 'cudaErrorCooperativeLaunchTooLarge', 'too many blocks in cooperative launch', 'not_a_stack_problem'),
    (721, 'cudaErrorTensorMemoryLeak', 'tensor memory not completely freed', 'not_a_stack_problem'),
    (800, 'cudaErrorNotPermitted', 'operation not permitted', 'virtualization_limit'),
    (801, 'cudaErrorNotSupported', 'operation not supported', 'virtualization_limit'),
    (802, 'cudaErrorSystemNotReady', 'system not yet initialized', 'no_driver'),
    (803, 'cudaErrorSystemDriverMismatch', 'system has unsupported display driver / cuda driver combination', 'nvml_driver_mismatch'),
    (804, 'cudaErrorCompatNotSupportedOnDevice', 'forward compatibility was attempted on non supported HW', 'driver_too_old'),
    (805, 'cudaErrorMpsConnectionFailed', 'MPS client failed to connect to the MPS control daemon or the MPS server', 'virtualization_limit'),
    (806, 'cudaErrorMpsRpcFailure', 'the remote procedural call between the MPS server and the MPS client failed', 'virtualization_limit'),
    (807, 'cudaErrorMpsServerNotReady', 'MPS server is not ready to accept new MPS client requests', 'virtualization_limit'),
    (808, 'cudaErrorMpsMaxClientsReached', 'the hardware resources required to create MPS client have been exhausted', 'virtualization_limit'),
    (809, 'cudaErrorMpsMaxConnectionsReached', 'the hardware resources required to support device connections have been exhausted', 'virtualization_limit'),
    (810, 'cudaErrorMpsClientTerminated', 'the MPS client has been terminated by the server', 'virtualization_limit'),
    (811, 'cudaErrorCdpNotSupported', 'is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it', 'virtualization_limit'),
    (812, 'cudaErrorCdpVersionMismatch', 'unsupported interaction between different versions of CUDA Dynamic Parallelism', None),
    (900, 'cudaErrorStreamCaptureUnsupported', 'operation not permitted when stream is capturing', 'not_a_stack_problem'),
    (901, 'cudaErrorStreamCaptureInvalidated', 'operation failed due to a previous error during capture', 'not_a_stack_problem'),
    (902, 'cudaErrorStreamCaptureMerge', 'operation would result in a merge of separate capture sequences', 'not_a_stack_problem'),
    (903, 'cudaErrorStreamCaptureUnmatched', 'capture was not ended in the same stream as it began', 'not_a_stack_problem'),
    (904, 'cudaErrorStreamCaptureUnjoined', 'capturing stream has unjoined work', 'not_a_stack_problem'),
    (905, 'cudaErrorStreamCaptureIsolation', 'dependency created on uncaptured work in another stream', 'not_a_stack_problem'),
    (906, 'cudaErrorStreamCaptureImplicit', 'operation would make the legacy stream depend on a capturing blocking stream', 'not_a_stack_problem'),
    (907, 'cudaErrorCapturedEvent', 'operation not permitted on an event last recorded in a capturing stream', 'not_a_stack_problem'),
    (908, 'cudaErrorStreamCaptureWrongThread', 'attempt to terminate a thread-local capture sequence from another thread', 'not_a_stack_problem'),
    (909, 'cudaErrorTimeout', 'wait operation timed out', None),
    (910, 'cudaErrorGraphExecUpdateFailure', 'the graph update was not performed because it included changes which violated constraints specific to instantiated graph update', 'not_a_stack_problem'),
    (911, 'cudaErrorExternalDevice', 'an async error has occured in external entity outside of CUDA', None),
    (912, 'cudaErrorInvalidClusterSize', 'a kernel launch error has occurred due to cluster misconfiguration', 'not_a_stack_problem'),
    (913, 'cudaErrorFunctionNotLoaded', 'the function handle is not loaded when calling an API that requires a loaded function', 'not_a_stack_problem'),
    (914, 'cudaErrorInvalidResourceType', 'one or more resources passed in are not valid resource types for the operation', 'not_a_stack_problem'),
    (915, 'cudaErrorInvalidResourceConfiguration', 'one or more resources are insufficient or non-applicable for the operation', 'not_a_stack_problem'),
    (999, 'cudaErrorUnknown', 'unknown error', 'no_driver'),
]
DRIVER_API_ERRORS = [
    (1, 'CUDA_ERROR_INVALID_VALUE', 'not_a_stack_problem'),
    (2, 'CUDA_ERROR_OUT_OF_MEMORY', 'insufficient_vram'),
    (3, 'CUDA_ERROR_NOT_INITIALIZED', 'no_driver'),
    (4, 'CUDA_ERROR_DEINITIALIZED', 'not_a_stack_problem'),
    (5, 'CUDA_ERROR_PROFILER_DISABLED', 'not_a_stack_problem'),
    (6, 'CUDA_ERROR_PROFILER_NOT_INITIALIZED', 'not_a_stack_problem'),
    (7, 'CUDA_ERROR_PROFILER_ALREADY_STARTED', 'not_a_stack_problem'),
    (8, 'CUDA_ERROR_PROFILER_ALREADY_STOPPED', 'not_a_stack_problem'),
    (34, 'CUDA_ERROR_STUB_LIBRARY', 'cuda_library_missing'),
    (36, 'CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER', 'driver_too_old'),
    (46, 'CUDA_ERROR_DEVICE_UNAVAILABLE', 'virtualization_limit'),
    (100, 'CUDA_ERROR_NO_DEVICE', 'no_driver'),
    (101, 'CUDA_ERROR_INVALID_DEVICE', 'not_a_stack_problem'),
    (102, 'CUDA_ERROR_DEVICE_NOT_LICENSED', 'virtualization_limit'),
    (200, 'CUDA_ERROR_INVALID_IMAGE', 'arch_not_in_build'),
    (201, 'CUDA_ERROR_INVALID_CONTEXT', 'not_a_stack_problem'),
    (202, 'CUDA_ERROR_CONTEXT_ALREADY_CURRENT', 'not_a_stack_problem'),
    (205, 'CUDA_ERROR_MAP_FAILED', 'not_a_stack_problem'),
    (206, 'CUDA_ERROR_UNMAP_FAILED', 'not_a_stack_problem'),
    (207, 'CUDA_ERROR_ARRAY_IS_MAPPED', 'not_a_stack_problem'),
    (208, 'CUDA_ERROR_ALREADY_MAPPED', 'not_a_stack_problem'),
    (209, 'CUDA_ERROR_NO_BINARY_FOR_GPU', 'arch_not_in_build'),
    (210, 'CUDA_ERROR_ALREADY_ACQUIRED', 'not_a_stack_problem'),
    (211, 'CUDA_ERROR_NOT_MAPPED', 'not_a_stack_problem'),
    (212, 'CUDA_ERROR_NOT_MAPPED_AS_ARRAY', 'not_a_stack_problem'),
    (213, 'CUDA_ERROR_NOT_MAPPED_AS_POINTER', 'not_a_stack_problem'),
    (214, 'CUDA_ERROR_ECC_UNCORRECTABLE', 'health_problem'),
    (215, 'CUDA_ERROR_UNSUPPORTED_LIMIT', 'not_a_stack_problem'),
    (216, 'CUDA_ERROR_CONTEXT_ALREADY_IN_USE', 'virtualization_limit'),
    (217, 'CUDA_ERROR_PEER_ACCESS_UNSUPPORTED', 'interconnect_slow'),
    (218, 'CUDA_ERROR_INVALID_PTX', 'toolkit_mismatch'),
    (219, 'CUDA_ERROR_INVALID_GRAPHICS_CONTEXT', 'not_a_stack_problem'),
    (220, 'CUDA_ERROR_NVLINK_UNCORRECTABLE', 'health_problem'),
    (221, 'CUDA_ERROR_JIT_COMPILER_NOT_FOUND', 'no_driver'),
    (222, 'CUDA_ERROR_UNSUPPORTED_PTX_VERSION', 'driver_too_old'),
    (223, 'CUDA_ERROR_JIT_COMPILATION_DISABLED', 'arch_not_in_build'),
    (224, 'CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY', 'not_a_stack_problem'),
    (225, 'CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC', 'not_a_stack_problem'),
    (226, 'CUDA_ERROR_CONTAINED', 'health_problem'),
    (300, 'CUDA_ERROR_INVALID_SOURCE', 'arch_not_in_build'),
    (301, 'CUDA_ERROR_FILE_NOT_FOUND', 'not_a_stack_problem'),
    (302, 'CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND', None),
    (303, 'CUDA_ERROR_SHARED_OBJECT_INIT_FAILED', None),
    (304, 'CUDA_ERROR_OPERATING_SYSTEM', 'virtualization_limit'),
    (400, 'CUDA_ERROR_INVALID_HANDLE', 'not_a_stack_problem'),
    (401, 'CUDA_ERROR_ILLEGAL_STATE', 'not_a_stack_problem'),
    (402, 'CUDA_ERROR_LOSSY_QUERY', 'not_a_stack_problem'),
    (500, 'CUDA_ERROR_NOT_FOUND', None),
    (600, 'CUDA_ERROR_NOT_READY', 'not_a_stack_problem'),
    (700, 'CUDA_ERROR_ILLEGAL_ADDRESS', 'not_a_stack_problem'),
    (701, 'CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES', 'not_a_stack_problem'),
    (702, 'CUDA_ERROR_LAUNCH_TIMEOUT', 'not_a_stack_problem'),
    (703, 'CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING', 'not_a_stack_problem'),
    (704, 'CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED', 'not_a_stack_problem'),
    (705, 'CUDA_ERROR_PEER_ACCESS_NOT_ENABLED', 'not_a_stack_problem'),
    (708, 'CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE', 'not_a_stack_problem'),
    (709, 'CUDA_ERROR_CONTEXT_IS_DESTROYED', 'not_a_stack_problem'),
    (710, 'CUDA_ERROR_ASSERT', 'not_a_stack_problem'),
    (711, 'CUDA_ERROR_TOO_MANY_PEERS', 'not_a_stack_problem'),
    (712, 'CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED', 'not_a_stack_problem'),
    (713, 'CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED', 'not_a_stack_problem'),
    (714, 'CUDA_ERROR_HARDWARE_STACK_ERROR', 'not_a_stack_problem'),
    (715, 'CUDA_ERROR_ILLEGAL_INSTRUCTION', 'not_a_stack_problem'),
    (716, 'CUDA_ERROR_MISALIGNED_ADDRESS', 'not_a_stack_problem'),
    (717, 'CUDA_ERROR_INVALID_ADDRESS_SPACE', 'not_a_stack_problem'),
    (718, 'CUDA_ERROR_INVALID_PC', 'not_a_stack_problem'),
    (719, 'CUDA_ERROR_LAUNCH_FAILED', 'not_a_stack_problem'),
    (720, 'CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE', 'not_a_stack_problem'),
    (721, 'CUDA_ERROR_TENSOR_MEMORY_LEAK', 'not_a_stack_problem'),
    (800, 'CUDA_ERROR_NOT_PERMITTED', 'virtualization_limit'),
    (801, 'CUDA_ERROR_NOT_SUPPORTED', 'virtualization_limit'),
    (802, 'CUDA_ERROR_SYSTEM_NOT_READY', 'no_driver'),
    (803, 'CUDA_ERROR_SYSTEM_DRIVER_MISMATCH', 'nvml_driver_mismatch'),
    (804, 'CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE', 'driver_too_old'),
    (805, 'CUDA_ERROR_MPS_CONNECTION_FAILED', 'virtualization_limit'),
    (806, 'CUDA_ERROR_MPS_RPC_FAILURE', 'virtualization_limit'),
    (807, 'CUDA_ERROR_MPS_SERVER_NOT_READY', 'virtualization_limit'),
    (808, 'CUDA_ERROR_MPS_MAX_CLIENTS_REACHED', 'virtualization_limit'),
    (809, 'CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED', 'virtualization_limit'),
    (810, 'CUDA_ERROR_MPS_CLIENT_TERMINATED', 'virtualization_limit'),
    (811, 'CUDA_ERROR_CDP_NOT_SUPPORTED', 'virtualization_limit'),
    (812, 'CUDA_ERROR_CDP_VERSION_MISMATCH', None),
    (900, 'CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED', 'not_a_stack_problem'),
    (901, 'CUDA_ERROR_STREAM_CAPTURE_INVALIDATED', 'not_a_stack_problem'),
    (902, 'CUDA_ERROR_STREAM_CAPTURE_MERGE', 'not_a_stack_problem'),
    (903, 'CUDA_ERROR_STREAM_CAPTURE_UNMATCHED', 'not_a_stack_problem'),
    (904, 'CUDA_ERROR_STREAM_CAPTURE_UNJOINED', 'not_a_stack_problem'),
    (905, 'CUDA_ERROR_STREAM_CAPTURE_ISOLATION', 'not_a_stack_problem'),
    (906, 'CUDA_ERROR_STREAM_CAPTURE_IMPLICIT', 'not_a_stack_problem'),
    (907, 'CUDA_ERROR_CAPTURED_EVENT', 'not_a_stack_problem'),
    (908, 'CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD', 'not_a_stack_problem'),
    (909, 'CUDA_ERROR_TIMEOUT', None),
    (910, 'CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE', 'not_a_stack_problem'),
    (911, 'CUDA_ERROR_EXTERNAL_DEVICE', None),
    (912, 'CUDA_ERROR_INVALID_CLUSTER_SIZE', 'not_a_stack_problem'),
    (913, 'CUDA_ERROR_FUNCTION_NOT_LOADED', 'not_a_stack_problem'),
    (914, 'CUDA_ERROR_INVALID_RESOURCE_TYPE', 'not_a_stack_problem'),
    (915, 'CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION', 'not_a_stack_problem'),
    (916, 'CUDA_ERROR_KEY_ROTATION', None),
    (999, 'CUDA_ERROR_UNKNOWN', 'no_driver'),
]
UNDECIDED_CUDA_ERRORS = {
    103: 'integrity checks (confidential computing): no DESIGN code fits',
    127: 'startup failure: no single cause documented',
    302: 'symbol missing from a module the program loads: program or build, undecided',
    303: 'module initialisation failed: undecided',
    500: 'named symbol not found: a wrong module or a missing arch, undecided without the call',
    812: 'CDP version mix inside one program: build detail, no code fits',
    909: 'wait timed out: a symptom, no cause',
    911: 'async error in an external device: outside CUDA',
    916: 'key rotation (confidential computing): no code fits',
}

# (framework's line, expected code): NCCL ncclResult_t strings (src/init.cc ncclGetErrorString), names, WARN lines.
NCCL_ROWS = [
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, "
     "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1", "nccl_comm_failure"),
    ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled cuda error "
     "(run with NCCL_DEBUG=INFO for details), NCCL version 2.14.3", "nccl_comm_failure"),
    ("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, internal error - please report this issue to the NCCL "
     "developers, NCCL version 2.19.3", "nccl_comm_failure"),
    ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, invalid argument (run with "
     "NCCL_DEBUG=WARN for details), NCCL version 2.20.5", "not_a_stack_problem"),
    ("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1207, invalid usage (run with NCCL_DEBUG=WARN for details), "
     "NCCL version 2.17.1", "not_a_stack_problem"),
    ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1691, remote process exited or there "
     "was a network error, NCCL version 2.21.5", "nccl_comm_failure"),
    ("ncclUnhandledCudaError: Call to CUDA function failed.", "nccl_comm_failure"),
    ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
     "nccl_comm_failure"),
    ("ncclInternalError: Internal check failed.", "nccl_comm_failure"),
    ("ncclInvalidArgument: Invalid value for an argument.", "not_a_stack_problem"),
    ("ncclInvalidUsage: This usually reflects invalid usage of NCCL library.", "not_a_stack_problem"),
    ("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
     "nccl_comm_failure"),
    ("NCCL Error 2: unhandled system error", "nccl_comm_failure"),
    ("NCCL Error 3: internal error", "nccl_comm_failure"),
    ("NCCL Error 4: invalid argument", "not_a_stack_problem"),
    ("NCCL Error 6: remote process exited or there was a network error", "nccl_comm_failure"),
    ("RuntimeError: NCCL communicator failed: ncclTimeout", "nccl_comm_failure"),
    ("node1:2811:2893 [0] NCCL INFO NET/IB : Got completion from peer 10.0.0.2<45766> with error 12, opcode 0, len 0, "
     "vendor err 129 (Recv)\nnode1:2811:2893 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<45766> with "
     "error 12, opcode 0, len 0, vendor err 129 (Recv)", "nccl_comm_failure"),
    ("node1:3021:3101 [2] NCCL WARN Call to ibv_create_qp failed", "nccl_comm_failure"),
    ("node1:3021:3101 [2] NCCL WARN Error: failed to extend /dev/shm/nccl-Y3bMWd to 9637892 bytes",
     "nccl_comm_failure"),
    ("node1:3021:3101 [2] NCCL WARN [Proxy Service 2] Failed to execute operation Connect from rank 2, retcode 3",
     "nccl_comm_failure"),
    ("node1:3021:3101 [1] NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000",
     "not_a_stack_problem"),
    ("node1:3021:3101 [0] NCCL WARN Cuda failure 'out of memory'", "insufficient_vram"),
    ("node1:3021:3101 [0] NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'",
     "driver_too_old"),
    # docs/CONTRACT.md §4 files P2P failures of a distributed run under nccl_comm_failure
    ("node1:3021:3101 [0] NCCL WARN Cuda failure 'peer access is not supported between these two devices'",
     "nccl_comm_failure"),
    ("node1:3021:3101 [0] NCCL WARN NET/Socket : No interface found in the same subnet as remote address "
     "10.0.0.3<34567>", "nccl_comm_failure"),
]
UNDECIDED_NCCL = [
    # ncclInProgress: a non-blocking communicator still initialising, a state rather than a failure
    "RuntimeError: NCCL error: NCCL operation in progress",
]

# cudnnStatus_t (cudnn_graph.h, cuDNN 9; cudnn.h, cuDNN 8) as torch prints it.
CUDNN_ROWS = [
    ("CUDNN_STATUS_NOT_INITIALIZED", "cudnn_mismatch"),
    ("CUDNN_STATUS_ALLOC_FAILED", "insufficient_vram"),
    ("CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", "insufficient_vram"),
    ("CUDNN_STATUS_BAD_PARAM", "not_a_stack_problem"),
    ("CUDNN_STATUS_BAD_PARAM_NULL_POINTER", "not_a_stack_problem"),
    ("CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER", "not_a_stack_problem"),
    ("CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH", "not_a_stack_problem"),
    ("CUDNN_STATUS_INVALID_VALUE", "not_a_stack_problem"),
    ("CUDNN_STATUS_MAPPING_ERROR", "not_a_stack_problem"),
    ("CUDNN_STATUS_EXECUTION_FAILED", "not_a_stack_problem"),
    ("CUDNN_STATUS_INTERNAL_ERROR", "not_a_stack_problem"),
    ("CUDNN_STATUS_NOT_SUPPORTED", "not_a_stack_problem"),
    ("CUDNN_STATUS_NOT_SUPPORTED_SHAPE", "not_a_stack_problem"),
    ("CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE", "not_a_stack_problem"),
    ("CUDNN_STATUS_NOT_SUPPORTED_LAYOUT", "not_a_stack_problem"),
    ("CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN", "not_a_stack_problem"),
    ("CUDNN_STATUS_RUNTIME_FP_OVERFLOW", "not_a_stack_problem"),
    ("CUDNN_STATUS_ARCH_MISMATCH", "arch_not_in_build"),
    ("CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", "arch_not_in_build"),
    ("CUDNN_STATUS_VERSION_MISMATCH", "cudnn_mismatch"),
    ("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", "cudnn_mismatch"),
    ("CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", "cudnn_mismatch"),
    ("CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE", "cudnn_mismatch"),
    ("CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH", "cudnn_mismatch"),
    ("CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING", "cuda_library_missing"),
    ("CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING", "cuda_library_missing"),
    ("CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER", "driver_too_old"),
    ("CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART", "cuda_library_missing"),
]
UNDECIDED_CUDNN = [
    "CUDNN_STATUS_LICENSE_ERROR",  # licensing of an early-access build: no DESIGN code
    "CUDNN_STATUS_DEPRECATED",  # a warning-level status
    "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED",  # runtime fusion compile failed: the graph or NVRTC, undecided
]

# cublasStatus_t (cublas_api.h) as torch prints it.
CUBLAS_ROWS = [
    ("CUBLAS_STATUS_NOT_INITIALIZED", "insufficient_vram"),
    ("CUBLAS_STATUS_ALLOC_FAILED", "insufficient_vram"),
    ("CUBLAS_STATUS_INVALID_VALUE", "not_a_stack_problem"),
    ("CUBLAS_STATUS_ARCH_MISMATCH", "arch_not_in_build"),
    ("CUBLAS_STATUS_MAPPING_ERROR", "not_a_stack_problem"),
    ("CUBLAS_STATUS_EXECUTION_FAILED", "not_a_stack_problem"),
    ("CUBLAS_STATUS_INTERNAL_ERROR", "not_a_stack_problem"),
    ("CUBLAS_STATUS_NOT_SUPPORTED", "arch_not_in_build"),
]
UNDECIDED_CUBLAS = ["CUBLAS_STATUS_LICENSE_ERROR"]

# nvmlReturn_t (nvml.h; the constants and exception class names of NVIDIA's nvidia-ml-py) -> code.
NVML_ROWS = {
    "NVML_ERROR_UNINITIALIZED": "not_a_stack_problem",
    "NVML_ERROR_INVALID_ARGUMENT": "not_a_stack_problem",
    "NVML_ERROR_NO_PERMISSION": "virtualization_limit",
    "NVML_ERROR_ALREADY_INITIALIZED": "not_a_stack_problem",
    "NVML_ERROR_NOT_FOUND": "not_a_stack_problem",
    "NVML_ERROR_INSUFFICIENT_SIZE": "not_a_stack_problem",
    "NVML_ERROR_INSUFFICIENT_POWER": "health_problem",
    "NVML_ERROR_DRIVER_NOT_LOADED": "no_driver",
    "NVML_ERROR_IRQ_ISSUE": "health_problem",
    "NVML_ERROR_LIBRARY_NOT_FOUND": "no_driver",
    "NVML_ERROR_CORRUPTED_INFOROM": "health_problem",
    "NVML_ERROR_GPU_IS_LOST": "health_problem",
    "NVML_ERROR_RESET_REQUIRED": "health_problem",
    "NVML_ERROR_OPERATING_SYSTEM": "virtualization_limit",
    "NVML_ERROR_LIB_RM_VERSION_MISMATCH": "nvml_driver_mismatch",
    "NVML_ERROR_NO_DATA": "not_a_stack_problem",
    "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED": "virtualization_limit",
    "NVML_ERROR_FREQ_NOT_SUPPORTED": "not_a_stack_problem",
    "NVML_ERROR_GPU_NOT_FOUND": "no_driver",
}
UNDECIDED_NVML = {
    "NVML_ERROR_NOT_SUPPORTED": "a query this GPU/driver does not offer: not a failure",
    "NVML_ERROR_TIMEOUT": "a caller's timeout passed",
    "NVML_ERROR_FUNCTION_NOT_FOUND": "binding newer than the driver's NVML: benign unless the call matters",
    "NVML_ERROR_IN_USE": "another client holds the GPU",
    "NVML_ERROR_MEMORY": "host memory",
    "NVML_ERROR_INSUFFICIENT_RESOURCES": "no single cause",
    "NVML_ERROR_ARGUMENT_VERSION_MISMATCH": "binding/driver struct versions: no single cause",
    "NVML_ERROR_DEPRECATED": "a warning",
    "NVML_ERROR_NOT_READY": "a state",
    "NVML_ERROR_INVALID_STATE": "a state",
    "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED": "a management request",
    "NVML_ERROR_UNKNOWN": "nothing to go on",
}
NVIDIA_SMI_ROWS = [
    ("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124",
     "nvml_driver_mismatch"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
     "driver is installed and running.", "no_driver"),
    ("Failed to initialize NVML: Driver Not Loaded", "no_driver"),
    ("Failed to initialize NVML: Insufficient Permissions", "virtualization_limit"),
    ("Failed to initialize NVML: GPU access blocked by the operating system", "virtualization_limit"),
    ("No devices were found", "no_driver"),
    ("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error", "health_problem"),
    ("Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover this "
     "GPU", "health_problem"),
    ("Unable to determine the device handle for gpu 0000:01:00.0: Insufficient External Power", "health_problem"),
    ("NVML: Unable to find the NVML library", "no_driver"),
]

# Xid numbers (nverror.h mnemonics, NVIDIA's Xid catalog): the hardware/ECC/bus/NVLink/firmware ones.
XID_HARDWARE = [32, 48, 58, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 121, 136, 137, 140, 143, 144, 145, 146, 147,
                148, 149, 150, 154, 155, 156, 157, 158, 160, 161, 167, 168, 171, 172, 173, 175]
# The application-fault Xids: NVIDIA's catalog resolves them with RESTART_APP (an illegal address in the program).
XID_APPLICATION = [13, 31, 43, 45, 69]

# The dynamic loader, for every CUDA library a framework loads.
LOADER_ROWS = [
    ("libcudart.so.12", "cuda_library_missing"),
    ("libcudart.so.11.0", "cuda_library_missing"),
    ("libcublas.so.12", "cuda_library_missing"),
    ("libcublasLt.so.12", "cuda_library_missing"),
    ("libcufft.so.11", "cuda_library_missing"),
    ("libcurand.so.10", "cuda_library_missing"),
    ("libcusolver.so.11", "cuda_library_missing"),
    ("libcusparse.so.12", "cuda_library_missing"),
    ("libcusparseLt.so.0", "cuda_library_missing"),
    ("libnvrtc.so.12", "cuda_library_missing"),
    ("libnvrtc-builtins.so.12.4", "cuda_library_missing"),
    ("libnvJitLink.so.12", "cuda_library_missing"),
    ("libnvToolsExt.so.1", "cuda_library_missing"),
    ("libcupti.so.12", "cuda_library_missing"),
    ("libcufile.so.0", "cuda_library_missing"),
    ("libnvshmem_host.so.3", "cuda_library_missing"),
    ("libcudnn.so.8", "cudnn_mismatch"),
    ("libcudnn.so.9", "cudnn_mismatch"),
    ("libcudnn_ops_infer.so.8", "cudnn_mismatch"),
    ("libcudnn_cnn_infer.so.8", "cudnn_mismatch"),
    ("libcudnn_adv.so.9", "cudnn_mismatch"),
    ("libcudnn_graph.so.9", "cudnn_mismatch"),
    ("libcudnn_engines_precompiled.so.9", "cudnn_mismatch"),
    ("libnccl.so.2", "nccl_mismatch"),
    ("libcuda.so.1", "no_driver"),
    ("libnvidia-ml.so.1", "no_driver"),
]
LOADER_FRAMES = [
    "ImportError: {lib}: cannot open shared object file: No such file or directory",
    "OSError: {lib}: cannot open shared object file: No such file or directory",
    "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library '{lib}'; "
    "dlerror: {lib}: cannot open shared object file: No such file or directory",
]
WINDOWS_DLL_ROWS = [
    ("cudart64_110.dll", "cuda_library_missing"),
    ("cublas64_12.dll", "cuda_library_missing"),
    ("cublasLt64_12.dll", "cuda_library_missing"),
    ("cufft64_11.dll", "cuda_library_missing"),
    ("cusolver64_11.dll", "cuda_library_missing"),
    ("cudnn64_8.dll", "cudnn_mismatch"),
    ("nvcuda.dll", "no_driver"),
]


def top(log: str):
    diagnoses = diagnose_text(log)
    return (diagnoses[0].code if diagnoses else None), diagnoses


def assert_top(log: str, expected: str) -> None:
    code, diagnoses = top(log)
    assert code == expected, "%r -> %s" % (log, [(d.code, d.confidence) for d in diagnoses])


def assert_undecided(log: str) -> None:
    _, diagnoses = top(log)
    confident = [(d.code, d.confidence) for d in diagnoses if d.confidence > UNDECIDED_MAX_CONFIDENCE]
    assert not confident, "%r has no single cause but got %s" % (log, confident)


def _runtime_rows(decided: bool):
    return [row for row in CUDART_ERRORS if (row[3] is not None) == decided]


def _runtime_id(row):
    return "%d-%s" % (row[0], row[1])


# How frameworks print a CUDA runtime error: torch, old torch, onnxruntime, TensorRT, cupy, llama.cpp.
RUNTIME_TEXT_FRAMES = [
    "RuntimeError: CUDA error: {text}\nCUDA kernel errors might be asynchronously reported at some other API call",
    "RuntimeError: cuda runtime error ({n}) : {text} at /pytorch/aten/src/THC/THCGeneral.cpp:50",
    "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : CUDA failure {n}: {text} ; "
    "GPU=0 ; hostname=node1 ; expr=cudaSetDevice(info_.device_id);",
    "[TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime ({text})",
    "CUDA error {n} at /llama.cpp/ggml-cuda.cu:8931: {text}",
]


@pytest.mark.parametrize("row", _runtime_rows(True), ids=_runtime_id)
def test_cuda_runtime_error_string_maps_to_its_cause(row):
    number, _, text, expected = row
    for frame in RUNTIME_TEXT_FRAMES:
        assert_top(frame.format(n=number, text=text), expected)


@pytest.mark.parametrize("row", _runtime_rows(True), ids=_runtime_id)
def test_cuda_runtime_error_name_maps_to_its_cause(row):
    number, name, text, expected = row
    assert_top("cupy_backends.cuda.api.runtime.CUDARuntimeError: %s" % name, expected)
    assert_top("cupy_backends.cuda.api.runtime.CUDARuntimeError: %s: %s" % (name, text), expected)


@pytest.mark.parametrize("row", [r for r in DRIVER_API_ERRORS if r[2]], ids=lambda r: r[1])
def test_cuda_driver_api_name_maps_to_its_cause(row):
    number, name, expected = row
    assert_top("numba.cuda.cudadrv.driver.CudaAPIError: [%d] Call to cuLaunchKernel results in %s" % (number, name),
               expected)
    assert_top("E external/xla/xla/stream_executor/cuda/cuda_driver.cc:152] failed call: %s" % name, expected)


@pytest.mark.parametrize("row", _runtime_rows(False), ids=_runtime_id)
def test_cuda_errors_without_a_single_cause_get_no_confident_answer(row):
    number, name, text, _ = row
    assert number in UNDECIDED_CUDA_ERRORS
    assert_undecided("RuntimeError: CUDA error: %s" % text)
    assert_undecided("cupy_backends.cuda.api.runtime.CUDARuntimeError: %s: %s" % (name, text))


@pytest.mark.parametrize("number,name,expected", [
    (35, "cudaErrorInsufficientDriver", "driver_too_old"),
    (100, "cudaErrorNoDevice", "no_driver"),
    (209, "cudaErrorNoKernelImageForDevice", "arch_not_in_build"),
    (222, "cudaErrorUnsupportedPtxVersion", "driver_too_old"),
    (802, "cudaErrorSystemNotReady", "no_driver"),
    (803, "cudaErrorSystemDriverMismatch", "nvml_driver_mismatch"),
    (804, "cudaErrorCompatNotSupportedOnDevice", "driver_too_old"),
])
def test_numeric_cuda_error_codes_where_frameworks_print_only_the_number(number, name, expected):
    assert_top("cudaGetDeviceCount returned %d" % number, expected)
    assert_top("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
               "calling NumCudaDevices() that might have already set an error? Error %d" % number, expected)
    assert_top("CUDA error %d at /src/ggml-cuda.cu:301" % number, expected)


def test_fabric_manager_is_named_for_system_not_ready():
    code, diagnoses = top("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
                          "before calling NumCudaDevices() that might have already set an error? Error 802: system "
                          "not yet initialized")
    assert code == "no_driver"
    assert any(e.id == "diagnose.sig.vocab_cuda_system_not_ready" for e in diagnoses[0].explanations)
    assert_top("nv-fabricmanager[2311]: fabric manager NVLink initialization failed", "no_driver")
    assert_top("Fabric State: In Progress\nRuntimeError: CUDA error: system not yet initialized", "no_driver")


@pytest.mark.parametrize("line,expected", NCCL_ROWS, ids=lambda v: v[:50] if isinstance(v, str) else None)
def test_nccl_vocabulary(line, expected):
    assert_top(line, expected)


@pytest.mark.parametrize("line", UNDECIDED_NCCL)
def test_nccl_states_without_a_cause(line):
    assert_undecided(line)


@pytest.mark.parametrize("status,expected", CUDNN_ROWS)
def test_cudnn_status_vocabulary(status, expected):
    assert_top("RuntimeError: cuDNN error: %s" % status, expected)
    assert_top("E tensorflow/stream_executor/cuda/cuda_dnn.cc:389] Could not create cudnn handle: %s" % status
               if status == "CUDNN_STATUS_NOT_INITIALIZED" else "cudnn_frontend error: %s" % status, expected)


@pytest.mark.parametrize("status", UNDECIDED_CUDNN + UNDECIDED_CUBLAS)
def test_library_statuses_without_a_cause(status):
    assert_undecided("RuntimeError: %s" % status)


@pytest.mark.parametrize("status,expected", CUBLAS_ROWS)
def test_cublas_status_vocabulary(status, expected):
    assert_top("RuntimeError: CUDA error: %s when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, "
               "b, ldb, &beta, c, ldc)`" % status, expected)


def _nvml_class_name(constant: str) -> str:
    import pynvml  # NVIDIA's nvidia-ml-py: the exception class names it really raises

    return getattr(pynvml, "NVMLError_" + "".join(w.capitalize() for w in constant[11:].split("_"))).__name__


@pytest.mark.parametrize("constant,expected", sorted(NVML_ROWS.items()))
def test_nvml_return_codes(constant, expected):
    assert_top("Failed with %s" % constant, expected)
    assert_top("pynvml.%s: something" % _nvml_class_name(constant), expected)


@pytest.mark.parametrize("constant", sorted(UNDECIDED_NVML))
def test_nvml_return_codes_without_a_cause(constant):
    assert_undecided("Failed with %s" % constant)
    assert_undecided("pynvml.%s: something" % _nvml_class_name(constant))


def test_every_nvml_return_code_is_in_a_table():
    import pynvml

    constants = {name for name in dir(pynvml) if name.startswith("NVML_ERROR_")}
    assert constants == set(NVML_ROWS) | set(UNDECIDED_NVML)


@pytest.mark.parametrize("line,expected", NVIDIA_SMI_ROWS, ids=lambda v: v[:40] if isinstance(v, str) else None)
def test_nvidia_smi_failure_texts(line, expected):
    assert_top(line, expected)


@pytest.mark.parametrize("xid", XID_HARDWARE)
def test_hardware_xids_are_health_problems(xid):
    assert_top("[1234.567] NVRM: Xid (PCI:0000:3b:00): %d, pid=2811, name=python, Ch 00000008" % xid,
               "health_problem")


@pytest.mark.parametrize("xid", XID_APPLICATION)
def test_application_xids_point_at_the_program(xid):
    assert_top("[1234.567] NVRM: Xid (PCI:0000:3b:00): %d, pid=2811, name=python, Ch 00000008" % xid,
               "not_a_stack_problem")


def test_xid_table_matches_the_driver_header():
    # The Xid #defines of nverror.h (NVIDIA/open-gpu-kernel-modules, tests/fixtures/PROVENANCE.md).
    defines = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-headers" / "nverror_h_xid_defines.txt"
    numbers = {int(n) for n in re.findall(r"\((\d+)\)", defines.read_text())}
    assert set(XID_HARDWARE + XID_APPLICATION) <= numbers


@pytest.mark.parametrize("lib,expected", LOADER_ROWS)
def test_loader_cannot_open_every_cuda_library(lib, expected):
    for frame in LOADER_FRAMES:
        assert_top(frame.format(lib=lib), expected)


@pytest.mark.parametrize("dll,expected", WINDOWS_DLL_ROWS)
def test_windows_dll_not_found(dll, expected):
    assert_top("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
               "'%s'; dlerror: %s not found" % (dll, dll), expected)


def test_tables_match_the_real_cuda_runtime_and_headers():
    library = CUDA_HOME / "lib64" / "libcudart.so.13"
    if not library.exists():
        pytest.skip("CUDA 13.0 runtime not installed here")
    cudart = ctypes.CDLL(str(library))
    cudart.cudaGetErrorString.restype = ctypes.c_char_p
    cudart.cudaGetErrorName.restype = ctypes.c_char_p
    for number, name, text, _ in CUDART_ERRORS:
        assert cudart.cudaGetErrorName(number).decode() == name
        assert cudart.cudaGetErrorString(number).decode() == text
    runtime = dict(re.findall(r"(cudaError\w+)\s*=\s*(\d+)", (CUDA_HOME / "include" / "driver_types.h").read_text()))
    runtime.pop("cudaErrorApiFailureBase", None)
    assert {name for _, name, _, _ in CUDART_ERRORS} == set(runtime)
    driver = dict(re.findall(r"(CUDA_ERROR_[A-Z0-9_]+) *= *(\d+)", (CUDA_HOME / "include" / "cuda.h").read_text()))
    assert {(name, number) for number, name, _ in DRIVER_API_ERRORS} == {(k, int(v)) for k, v in driver.items()}
    undecided = {n for n, _, _, code in CUDART_ERRORS if code is None} | \
        {n for n, _, code in DRIVER_API_ERRORS if code is None}
    assert undecided == set(UNDECIDED_CUDA_ERRORS)
