// Package device describes where the memory of an Arrow buffer lives.
//
// A Device is a (Type, ID) pair with the values of the Arrow C Device Data
// Interface (ARROW_DEVICE_*). The zero value is not a valid device; use CPU
// for host memory. Parse accepts the strings "cpu", "cuda" and "cuda:N".
//
// What can be done with the memory of a device type is its Backend's
// (backend.go): the CPU backend is always registered, others register from
// their own package's init() (the CUDA backend: gosrc/device/cuda).
package device

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Type is an Arrow device type (ArrowDeviceType in arrow-c-abi.h).
type Type int32

// The device types of the Arrow C Device Data Interface. Values are fixed by
// the specification and match DLPack's DLDeviceType.
const (
	CPU         Type = 1
	CUDA        Type = 2
	CUDAHost    Type = 3
	OpenCL      Type = 4
	Vulkan      Type = 7
	Metal       Type = 8
	VPI         Type = 9
	ROCm        Type = 10
	ROCmHost    Type = 11
	ExtDev      Type = 12
	CUDAManaged Type = 13
	OneAPI      Type = 14
	WebGPU      Type = 15
	Hexagon     Type = 16
)

var typeNames = map[Type]string{
	CPU: "cpu", CUDA: "cuda", CUDAHost: "cuda_host", OpenCL: "opencl",
	Vulkan: "vulkan", Metal: "metal", VPI: "vpi", ROCm: "rocm",
	ROCmHost: "rocm_host", ExtDev: "ext_dev", CUDAManaged: "cuda_managed",
	OneAPI: "oneapi", WebGPU: "webgpu", Hexagon: "hexagon",
}

// Known reports whether t is one of the device types the specification defines.
func (t Type) Known() bool { _, ok := typeNames[t]; return ok }

// HostAccessible reports whether memory of this type can be read directly by
// host code (CPU, pinned host memory and managed memory).
func (t Type) HostAccessible() bool {
	return t == CPU || t == CUDAHost || t == CUDAManaged || t == ROCmHost
}

func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("device_type(%d)", int32(t))
}

// Device is a device type and a device id. For CPU memory the id is -1, as the
// specification asks of producers.
type Device struct {
	Type Type
	ID   int64
}

// Host is the CPU device.
var Host = Device{Type: CPU, ID: -1}

// ErrUnknownDevice is returned for device types and strings this package does not know.
var ErrUnknownDevice = errors.New("unknown device")

func (d Device) String() string {
	if d.Type == CPU {
		return "cpu"
	}
	return fmt.Sprintf("%s:%d", d.Type, d.ID)
}

// IsCPU reports whether d is host memory of type CPU.
func (d Device) IsCPU() bool { return d.Type == CPU }

// Parse reads "cpu", "cuda", "cuda:N" (and the other type names with ":N").
func Parse(s string) (Device, error) {
	name, idText, hasID := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	for t, n := range typeNames {
		if n != name {
			continue
		}
		if t == CPU {
			if hasID && idText != "-1" && idText != "0" {
				return Device{}, fmt.Errorf("%w: %q: the CPU has no device ids", ErrUnknownDevice, s)
			}
			return Host, nil
		}
		id := int64(0)
		if hasID {
			v, err := strconv.ParseInt(idText, 10, 64)
			if err != nil || v < 0 {
				return Device{}, fmt.Errorf("%w: %q: device id must be a non-negative integer", ErrUnknownDevice, s)
			}
			id = v
		}
		return Device{Type: t, ID: id}, nil
	}
	return Device{}, fmt.Errorf("%w: %q (expected \"cpu\", \"cuda\" or \"cuda:N\")", ErrUnknownDevice, s)
}

// ErrUnavailable is wrapped by errors about devices that cannot be used in
// this process: no driver, no backend for the device type, no such device id.
var ErrUnavailable = errors.New("device unavailable")

type unavailableError struct{ msg string }

func (e *unavailableError) Error() string { return e.msg }
func (e *unavailableError) Unwrap() error { return ErrUnavailable }

// Unavailable returns an error wrapping ErrUnavailable with the given message.
func Unavailable(format string, args ...any) error {
	return &unavailableError{msg: fmt.Sprintf(format, args...)}
}

// DriverError is a failed call into a device driver.
type DriverError struct {
	Call string // the driver function, e.g. "cuMemAlloc_v2"
	Code int    // the driver's numeric result
	Name string // the driver's name for the result, e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Msg  string // the driver's description, when it has one
}

func (e *DriverError) Error() string {
	s := fmt.Sprintf("%s failed: %s (%d)", e.Call, e.Name, e.Code)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}
