//===- CUDALibraries.cpp - CUDA libraries found at run time ---------------===//

#include "CUDALibraries.h"

#include <cstdlib>
#include <dlfcn.h>
#include <glob.h>

using namespace mlir::dtc;

void *mlir::dtc::loadCUDALibrary(const char *variable,
                                 const std::vector<std::string> &names,
                                 const std::string &wheelDir,
                                 std::string &tried) {
  std::vector<std::string> files;
  if (const char *explicitPath = std::getenv(variable))
    files.push_back(explicitPath);
  files.insert(files.end(), names.begin(), names.end());
  if (const char *home = std::getenv("CUDA_HOME"))
    for (const std::string &name : names)
      files.push_back(std::string(home) + "/lib64/" + name);
  std::vector<std::string> roots{"/usr", "/usr/local"};
  for (const char *var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char *root = std::getenv(var))
      roots.push_back(root);
  if (const char *home = std::getenv("HOME"))
    roots.push_back(std::string(home) + "/.local");
  for (const std::string &root : roots)
    for (const char *packages : {"site-packages", "dist-packages"})
      for (const std::string &name : names) {
        // (CUDA 12 wheels: nvidia/cublas/lib; CUDA 13: nvidia/cu13/lib.)
        for (const std::string &dir : {wheelDir, std::string("cu*")}) {
          std::string pattern = root + "/lib/python3*/" + packages +
                                "/nvidia/" + dir + "/lib/" + name;
          glob_t found;
          if (glob(pattern.c_str(), 0, nullptr, &found) == 0)
            for (size_t i = 0; i < found.gl_pathc; ++i)
              files.push_back(found.gl_pathv[i]);
          globfree(&found);
        }
      }
  for (const std::string &file : files) {
    if (void *library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL))
      return library;
    tried += "\n  " + file + ": " + dlerror();
  }
  return nullptr;
}
