
cla