// dtc-run on bad input: one clear error and a non-zero exit, never a crash.
// RUN: rm -rf %t && mkdir -p %t/good %t/badshape %t/baddtype %t/corrupt %t/fortran %t/truncated
// RUN: %python -c "import numpy as np; np.save('%t/good/x.npy', np.ones((2, 3), np.float32)); np.save('%t/good/i.npy', np.array([0, 7], np.int64)); np.save('%t/good/d.npy', np.array([1, 0], np.int32))"
// RUN: %python -c "import numpy as np; np.save('%t/badshape/x.npy', np.ones((3, 2), np.float32))"
// RUN: %python -c "import numpy as np; np.save('%t/baddtype/x.npy', np.ones((2, 3), np.float64))"
// RUN: %python -c "open('%t/corrupt/x.npy', 'wb').write(b'not a numpy file')"
// RUN: %python -c "import numpy as np; np.save('%t/fortran/x.npy', np.asfortranarray(np.ones((2, 3), np.float32)))"
// RUN: %python -c "import onnx, numpy as np; from onnx import numpy_helper; open('%t/truncated/x.pb', 'wb').write(numpy_helper.from_array(np.ones((2, 3), np.float32), 'x').SerializeToString()[:-7])"

// RUN: dtc-run %s --function=ok --inputs %t/good | FileCheck %s --check-prefix=OK
// OK: y: 2x3xf32 = 2 2 2 2 2 2

// RUN: not dtc-run %s --function=ok 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: no tensor given for input 'x'

// RUN: not dtc-run %s --function=ok --inputs %t/badshape 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: input 'x' has type 3x2xf32 but the function expects 'tensor<2x3xf32>'

// RUN: not dtc-run %s --function=ok --inputs %t/baddtype 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: input 'x' has type 2x3xf64 but the function expects 'tensor<2x3xf32>'

// RUN: not dtc-run %s --function=ok --inputs %t/corrupt 2>&1 | FileCheck %s --check-prefix=CORRUPT
// CORRUPT: error: {{.*}}x.npy: not a valid .npy file: missing the \x93NUMPY magic

// RUN: not dtc-run %s --function=ok --inputs %t/fortran 2>&1 | FileCheck %s --check-prefix=FORTRAN
// FORTRAN: error: {{.*}}x.npy: not a valid .npy file: fortran_order arrays are not supported

// RUN: not dtc-run %s --function=ok --inputs %t/truncated 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: {{.*}}x.pb: not a valid ONNX TensorProto (truncated or corrupt)

// RUN: not dtc-run %s --function=ok --inputs %t/no-such-dir 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: error: {{.*}}no-such-dir: cannot read directory

// RUN: not dtc-run %s --inputs %t/good 2>&1 | FileCheck %s --check-prefix=WHICH
// WHICH: error: the module has several public functions; choose one with --function

// RUN: not dtc-run %s --function=nope --inputs %t/good 2>&1 | FileCheck %s --check-prefix=NOFUNC
// NOFUNC: error: no function named 'nope'

// RUN: not dtc-run %s --function=gather --inputs %t/good 2>&1 | FileCheck %s --check-prefix=INDEX
// INDEX: error: index 7 is out of range for dimension of size 4

// RUN: not dtc-run %s --function=divide --inputs %t/good 2>&1 | FileCheck %s --check-prefix=DIVZERO
// DIVZERO: error: integer division by zero

// RUN: not dtc-run %t/missing.mlir 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: error: cannot open input file '{{.*}}missing.mlir'

func.func @ok(%x: tensor<2x3xf32> {dtc.input = "x"}) -> (tensor<2x3xf32> {dtc.output = "y"}) {
  %y = dtc.add %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

func.func @gather(%i: tensor<2xi64> {dtc.input = "i"}) -> tensor<2xf32> {
  %t = dtc.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y = dtc.gather %t[%i] dim = 0 : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

func.func @divide(%d: tensor<2xi32> {dtc.input = "d"}) -> tensor<2xi32> {
  %y = dtc.div %d, %d : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %y : tensor<2xi32>
}

// RUN: not dtc-run %s --function=not_tensor --inputs %t/good 2>&1 | FileCheck %s --check-prefix=NOTTENSOR
// NOTTENSOR: error: argument 'arg0' has type 'i32'; the reference executor takes statically shaped tensors of dtc element types
func.func @not_tensor(%n: i32) {
  return
}

// RUN: dtc-run %s --function=bf16_input --inputs %t/good | FileCheck %s --check-prefix=BF16
// BF16: y: 2x3xbf16 = 2 2 2 2 2 2
func.func @bf16_input(%x: tensor<2x3xbf16> {dtc.input = "x"}) -> (tensor<2x3xbf16> {dtc.output = "y"}) {
  %y = dtc.add %x, %x : (tensor<2x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16>
  return %y : tensor<2x3xbf16>
}

// RUN: not dtc-run %s --function=huge 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: a result of 8589934592 elements is beyond the reference executor's limit of 4294967296
func.func @huge() -> tensor<65536x65536x2xf32> {
  %y = dtc.iota dim = 0 : tensor<65536x65536x2xf32>
  return %y : tensor<65536x65536x2xf32>
}
