//===- GeneratorMain.cpp - main() of a kgen generator ---------------------===//
#include "tools/kgen/Generator.h"

int main(int argc, char **argv) { return kgen::generatorMain(argc, argv); }
