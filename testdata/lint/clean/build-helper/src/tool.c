#include <stdio.h>

int main(void) {
    puts("tool");
    return 0;
}
