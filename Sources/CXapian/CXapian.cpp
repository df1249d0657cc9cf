#include "CXapian.h"
