//===- CuBLAS.cpp - cuBLAS, loaded at run time ----------------------------===//

#include "CuBLAS.h"

#include <cstdlib>
#include <dlfcn.h>
#include <glob.h>
#include <vector>

using namespace mlir::dtc;

namespace {

/// The candidate library files, in search order.
std::vector<std::string> candidates() {
  std::vector<std::string> files;
  if (const char *explicitPath = std::getenv("DTC_CUBLAS"))
    files.push_back(explicitPath);
  for (const char *name :
       {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
    files.push_back(name);
  if (const char *home = std::getenv("CUDA_HOME"))
    files.push_back(std::string(home) + "/lib64/libcublas.so");
  std::vector<std::string> roots{"/usr", "/usr/local"};
  for (const char *var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char *root = std::getenv(var))
      roots.push_back(root);
  if (const char *home = std::getenv("HOME"))
    roots.push_back(std::string(home) + "/.local");
  for (const std::string &root : roots)
    for (const char *packages : {"site-packages", "dist-packages"}) {
      std::string pattern =
          root + "/lib/python3*/" + packages + "/nvidia/cu*/lib/libcublas.so.*";
      std::string older = root + "/lib/python3*/" + packages +
                          "/nvidia/cublas/lib/libcublas.so.*";
      for (const std::string &p : {pattern, older}) {
        glob_t found;
        if (glob(p.c_str(), 0, nullptr, &found) == 0)
          for (size_t i = 0; i < found.gl_pathc; ++i)
            files.push_back(found.gl_pathv[i]);
        globfree(&found);
      }
    }
  return files;
}

} // namespace

std::string CuBLAS::load() {
  std::string tried;
  for (const std::string &file : candidates()) {
    void *library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      tried += "\n  " + file + ": " + dlerror();
      continue;
    }
    create =
        reinterpret_cast<decltype(create)>(dlsym(library, "cublasCreate_v2"));
    destroy =
        reinterpret_cast<decltype(destroy)>(dlsym(library, "cublasDestroy_v2"));
    setStream = reinterpret_cast<decltype(setStream)>(
        dlsym(library, "cublasSetStream_v2"));
    sgemm = reinterpret_cast<decltype(sgemm)>(dlsym(library, "cublasSgemm_v2"));
    dgemm = reinterpret_cast<decltype(dgemm)>(dlsym(library, "cublasDgemm_v2"));
    gemmEx = reinterpret_cast<decltype(gemmEx)>(dlsym(library, "cublasGemmEx"));
    if (create && destroy && setStream && sgemm && dgemm && gemmEx) {
      path = file;
      return "";
    }
    tried += "\n  " + file + ": lacks a cuBLAS v2 entry point";
    dlclose(library);
  }
  return "cannot load cuBLAS (set DTC_CUBLAS to libcublas.so's path); "
         "tried:" +
         tried;
}
